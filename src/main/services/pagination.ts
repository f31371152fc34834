import { z } from 'zod'
import type { Page } from '../../shared/types'
import { queryInt } from './validation'

/** `page` ≥ 1 (default 1) and `size` 1–max (default 20), DESIGN §7. */
export function paginationSchema(maxSize = 100) {
  return { page: queryInt(1, 1, 1_000_000), size: queryInt(20, 1, maxSize) }
}

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

export const paginationQuery = z.object(paginationSchema())
