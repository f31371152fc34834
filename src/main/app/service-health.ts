/**
 * What `GET /health` reports. A vault in a file is healthy while it serves. An
 * instance of a team vault is healthy while its database answers, so that a
 * load balancer takes out an instance cut off from the database and sends its
 * requests to the others. The database is asked at most once per
 * HEALTH_CHECK_INTERVAL_MS however often the endpoint is called (it takes no
 * key, so anyone could call it in a loop); callers meanwhile share the answer.
 */
const HEALTH_CHECK_INTERVAL_MS = 1000

export class ServiceHealth {
  private probe: (() => Promise<boolean>) | undefined
  private last: { at: number; healthy: Promise<boolean> } | undefined

  /** From now on, health is whether `probe` resolves true (it must settle within a few seconds). */
  watch(probe: () => Promise<boolean>): void {
    this.probe = probe
    this.last = undefined
  }

  healthy(): Promise<boolean> {
    if (!this.probe) return Promise.resolve(true)
    const now = performance.now()
    if (!this.last || now - this.last.at >= HEALTH_CHECK_INTERVAL_MS) this.last = { at: now, healthy: this.probe().catch(() => false) }
    return this.last.healthy
  }
}
