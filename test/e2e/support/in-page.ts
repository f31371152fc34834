/**
 * Functions the browser tests run inside the page with `page.evaluate(fn)`:
 * each must stand alone (no imports, no outer variables).
 */

// The little of the DOM they use, declared for this file only: the tests' TypeScript project has no DOM library.
interface PageElement {
  readonly tagName: string
  readonly textContent: string | null
  readonly scrollWidth: number
  readonly clientWidth: number
  getBoundingClientRect(): { left: number; right: number; width: number }
  getAttribute(name: string): string | null
  closest(selector: string): PageElement | null
  querySelector(selector: string): PageElement | null
  querySelectorAll(selector: string): Iterable<PageElement>
}
declare const document: Pick<PageElement, 'querySelector' | 'querySelectorAll'> & {
  readonly scrollingElement: PageElement
  createRange(): { selectNodeContents(node: PageElement): void; getBoundingClientRect(): { right: number } }
}
declare function getComputedStyle(element: PageElement): { paddingRight: string; textOverflow: string }
declare function requestAnimationFrame(callback: () => void): number

/**
 * What is cut off or scrolls sideways in the current view, one line each (an
 * empty list when everything fits): the window, the view and every table's
 * scroll containers wider than their box, column headers whose text does not
 * fit their cell or the table, cell content spilling out of its cell (other
 * than behind an ellipsis), and controls past the view's edges.
 */
export function horizontalOverflows(): string[] {
  const problems: string[] = []
  const visible = (element: PageElement) => element.getBoundingClientRect().width > 0
  const label = (element: PageElement) => element.closest('[data-test]')?.getAttribute('data-test') ?? element.tagName.toLowerCase()
  const checkScroll = (element: PageElement, what: string) => {
    // One pixel of slack for sub-pixel rounding.
    if (visible(element) && element.scrollWidth > element.clientWidth + 1) {
      problems.push(`${what} scrolls sideways: ${element.scrollWidth}px of content in ${element.clientWidth}px`)
    }
  }

  const main = document.querySelector('main')!
  checkScroll(document.scrollingElement, 'the window')
  checkScroll(main, 'the view')
  const view = main.getBoundingClientRect()

  for (const table of main.querySelectorAll('.n-data-table')) {
    if (!visible(table)) continue
    const name = label(table)
    for (const container of table.querySelectorAll('.n-data-table-base-table-header, .n-data-table-base-table-body, .n-scrollbar-container')) {
      checkScroll(container, `table ${name}`)
    }
    const box = table.querySelector('.n-data-table-base-table')!.getBoundingClientRect()
    for (const th of table.querySelectorAll('thead th')) {
      const title = th.textContent?.trim()
      if (!title) continue
      const text = document.createRange()
      text.selectNodeContents(th)
      // The text's own box is as wide as the text, even where an ellipsis hides the rest.
      const right = Math.min(th.getBoundingClientRect().right - parseFloat(getComputedStyle(th).paddingRight), box.right)
      if (text.getBoundingClientRect().right > right + 0.5) problems.push(`table ${name}: the header "${title}" is cut off`)
    }
    // A cell may end its text in an ellipsis (the whole value is in a tooltip), but nothing may spill out of it.
    for (const td of table.querySelectorAll('tbody td')) {
      if ([td, ...td.querySelectorAll('*')].some((element) => getComputedStyle(element).textOverflow === 'ellipsis')) continue
      const content = document.createRange()
      content.selectNodeContents(td)
      if (content.getBoundingClientRect().right > td.getBoundingClientRect().right - parseFloat(getComputedStyle(td).paddingRight) + 0.5) {
        problems.push(`table ${name}: "${td.textContent?.trim()}" spills out of its cell`)
      }
    }
  }

  for (const control of main.querySelectorAll('button, input, textarea, .n-base-selection, .n-tabs-tab, .n-upload-dragger')) {
    const rect = control.getBoundingClientRect()
    if (rect.width > 0 && (rect.right > view.right + 0.5 || rect.left < view.left - 0.5)) {
      problems.push(`${label(control)}: ${control.tagName.toLowerCase()} "${control.textContent?.trim() ?? ''}" sticks out of the view`)
    }
  }
  return problems
}

/** True once nothing loads or spins in the view, and no toast or menu is open over it. */
export function settled(): boolean {
  const busy = document.querySelectorAll('main [aria-busy="true"], main .n-data-table-loading-wrapper, main .n-button--loading, main .activity--loading, .n-notification, .n-base-select-menu')
  for (const element of busy) if (element.getBoundingClientRect().width > 0) return false
  return true
}

/** The number of entries the audit log's activity chart shows (0 until it has loaded). */
export function activityChartTotal(): number {
  return Number(/: (\d+) in total$/.exec(document.querySelector('.chart canvas')?.getAttribute('aria-label') ?? '')?.[1] ?? 0)
}

/** The audit log's activity chart: the width of its box, of its canvas on screen and in pixels, and whether the canvas holds a drawing. */
export function activityChartDrawing(): { boxWidth: number; canvasWidth: number; pixelWidth: number; drawn: boolean } {
  const canvas = document.querySelector('.chart canvas') as unknown as (PageElement & { width: number; height: number; getContext(type: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } | null }) | null
  if (!canvas || canvas.width === 0 || canvas.height === 0) return { boxWidth: 0, canvasWidth: 0, pixelWidth: 0, drawn: false }
  const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data
  let drawn = false
  for (let alpha = 3; alpha < pixels.length && !drawn; alpha += 4) drawn = pixels[alpha] > 0
  return { boxWidth: canvas.closest('.chart')!.clientWidth, canvasWidth: Math.round(canvas.getBoundingClientRect().width), pixelWidth: canvas.width, drawn }
}

/** Resolves after the next frame is painted. */
export function nextFrame(): Promise<void> {
  return new Promise((resolve) => requestAnimationFrame(() => resolve()))
}

/** True once no transition or animation is running, but for endless ones (spinners): what is open has faded in. */
export function transitionsDone(): boolean {
  const scope = globalThis as unknown as { document: { getAnimations(): { playState: string; effect: { getTiming(): { iterations: number } } | null }[] } }
  return scope.document.getAnimations().every((animation) => animation.playState !== 'running' || animation.effect?.getTiming().iterations === Infinity)
}

/**
 * The focus ring of the focused element: drawn on it or, for a field, on the
 * field's box around it. Its style and width, and the contrast of its colour
 * against what is behind it (the first opaque background up the tree, with
 * translucent ones laid over it).
 */
export function focusRing(): { focused: string; focusVisible: boolean; style: string; width: number; contrast: number } {
  interface Styled {
    tagName: string
    className: string
    parentElement: Styled | null
    matches(selector: string): boolean
  }
  const scope = globalThis as unknown as {
    document: { activeElement: Styled | null }
    getComputedStyle(element: Styled): { outlineStyle: string; outlineWidth: string; outlineColor: string; backgroundColor: string }
  }
  const rgba = (color: string) => {
    const [r, g, b, a = 1] = (color.match(/[\d.]+/g) ?? ['0', '0', '0', '0']).map(Number)
    return { r, g, b, a }
  }
  const luminance = ({ r, g, b }: { r: number; g: number; b: number }) => {
    const linear = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
  }
  const focused = scope.document.activeElement!
  let ring: Styled | null = focused
  for (let i = 0; ring && i < 4 && scope.getComputedStyle(ring).outlineStyle === 'none'; i++) ring = ring.parentElement
  const owner = ring ?? focused
  const style = scope.getComputedStyle(owner)
  const layers: { r: number; g: number; b: number; a: number }[] = []
  for (let element = owner.parentElement; element; element = element.parentElement) {
    const layer = rgba(scope.getComputedStyle(element).backgroundColor)
    if (layer.a > 0) layers.unshift(layer)
    if (layer.a >= 1) break
  }
  const behind = layers.reduce((below, layer) => ({ r: layer.r * layer.a + below.r * (1 - layer.a), g: layer.g * layer.a + below.g * (1 - layer.a), b: layer.b * layer.a + below.b * (1 - layer.a), a: 1 }), { r: 255, g: 255, b: 255, a: 1 })
  const [light, dark] = [luminance(rgba(style.outlineColor)), luminance(behind)].sort((x, y) => y - x)
  return {
    focused: `${focused.tagName.toLowerCase()}.${String(focused.className).split(' ')[0]}`,
    focusVisible: focused.matches(':focus-visible'),
    style: style.outlineStyle,
    width: parseFloat(style.outlineWidth),
    contrast: Math.round(((light + 0.05) / (dark + 0.05)) * 100) / 100
  }
}
