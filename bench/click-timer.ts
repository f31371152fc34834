/**
 * Timing inside the page (for `page.evaluate`): from a click event to the frame that
 * draws what the click asked for. The functions stand alone (no imports, no outer variables).
 */

// The little of the DOM they use, declared for this file only: the benchmark's TypeScript project has no DOM library.
interface TimedElement {
  readonly textContent: string | null
}
declare const document: {
  readonly body: unknown
  querySelectorAll(selector: string): Iterable<TimedElement>
  addEventListener(type: 'click', listener: () => void, options: { capture: boolean; once: boolean }): void
}
declare const window: { shownAfterClick?: Promise<number>; fetch: PageFetch }
type PageFetch = ((input: string, init?: unknown) => Promise<unknown>) & { bind(thisArg: unknown): PageFetch }
declare class MutationObserver {
  constructor(callback: () => void)
  observe(target: unknown, options: { subtree: boolean; childList: boolean; characterData: boolean; attributes: boolean }): void
  disconnect(): void
}
declare function requestAnimationFrame(callback: () => void): number

/** What the page must show: rows (each holding `rowText`, when given) and a pager holding `pagerText`. */
export interface Shown {
  rows: string
  rowText?: string
  pagerText?: string
  /**
   * Part of the URL of a request (the harness's IPC bridge goes over `fetch`) that must have
   * answered after the click: rows a view kept from its last visit do not count as shown.
   */
  answered?: string
}

/** Arms the timer: the next click starts it; `clickTimerResult` resolves with the milliseconds until `shown` is drawn. */
export function armClickTimer(shown: Shown): void {
  let answered = shown.answered === undefined
  const fetchFromPage = window.fetch.bind(window)
  if (!answered) {
    window.fetch = (input, init) => {
      const response = fetchFromPage(input, init)
      if (String(input).includes(shown.answered!)) void response.then(() => (answered = true))
      return response
    }
  }
  const holds = () => {
    if (!answered) return false
    const rows = [...document.querySelectorAll(shown.rows)]
    if (rows.length === 0 || (shown.rowText && !rows.every((row) => row.textContent?.includes(shown.rowText!)))) return false
    return !shown.pagerText || [...document.querySelectorAll('.n-pagination')].some((pager) => pager.textContent?.includes(shown.pagerText!))
  }
  window.shownAfterClick = new Promise((resolve) => {
    const startTimer = () => {
      const clicked = performance.now()
      const check = () => {
        if (!holds()) return
        observer.disconnect()
        window.fetch = fetchFromPage
        // The rows are in the document; the frame that draws them starts with this callback.
        requestAnimationFrame(() => resolve(performance.now() - clicked))
      }
      const observer = new MutationObserver(check)
      observer.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true })
      check()
    }
    document.addEventListener('click', startTimer, { capture: true, once: true })
  })
}

export function clickTimerResult(): Promise<number> {
  return window.shownAfterClick!
}
