import type { Page } from '../../shared/types'

export interface PageRequest {
  page: number
  size: number
}

export function offsetOf({ page, size }: PageRequest): number {
  return (page - 1) * size
}

/** Wraps one page of items with the pagination block. */
export function toPage<T>(items: T[], totalItems: number, { page, size }: PageRequest): Page<T> {
  return {
    pagination: {
      total_items: totalItems,
      page_number: page,
      page_size: size,
      total_pages: Math.ceil(totalItems / size)
    },
    data: items
  }
}
