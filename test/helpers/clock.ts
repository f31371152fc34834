import type { Clock } from '../../src/main/app/service-context'

/** A clock the test moves by hand: expiry is tested without sleeping. */
export class TestClock implements Clock {
  constructor(private current = Date.parse('2026-11-25T12:00:00.000Z')) {}

  now(): number {
    return this.current
  }

  advance(ms: number): void {
    this.current += ms
  }

  set(iso: string): void {
    this.current = Date.parse(iso)
  }
}
