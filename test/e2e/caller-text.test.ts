/**
 * Caller text (token ids, metadata, application names) shown among the app's
 * own text cannot pass for something else: a right-to-left override stored
 * before the service refused it does not reverse the confirmation around it,
 * a metadata value holding `, key=value` stays one entry, and an id holding a
 * space is found by the id filter as itself.
 */
import type { Locator, Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { axeViolations } from './support/axe'
import { chromiumAvailable, errorsOf, navigate } from './support/browser'
import { transitionsDone } from './support/in-page'
import { useDesktopApp } from './support/desktop-app'

const RIGHT_TO_LEFT_OVERRIDE = '\u202e'
const SPOOFED_APPLICATION = `Reporting ${RIGHT_TO_LEFT_OVERRIDE}boj`
/** Two search indexes, the second holding a comma: joined with ", " they would read as three. */
const SEARCH_INDEXES = ['{{ data | slice: 0, 4 }}', '{{ data | slice: 0, 2 }}, {{ data | slice: 2, 2 }}']
const CONTAINERS = ['/general/high/', '/billing/eu/']
const SPOOFED_REASON = `Chargeback ${RIGHT_TO_LEFT_OVERRIDE}review`

/* The browser globals the page functions below use: the tests' TypeScript has no DOM library. */
interface Box {
  top: number
  bottom: number
  left: number
  right: number
}
interface TextNode {
  textContent: string | null
}
declare const document: {
  querySelector(selector: string): TextNode | null
  createTreeWalker(root: TextNode, whatToShow: number): { currentNode: TextNode; nextNode(): TextNode | null }
  createRange(): { setStart(node: TextNode, offset: number): void; setEnd(node: TextNode, offset: number): void; getClientRects(): Iterable<Box> & ArrayLike<Box> }
}
declare function getComputedStyle(element: unknown): { unicodeBidi: string }

/** The computed `unicode-bidi` of each element holding exactly `text` inside `scope`. */
function bidiOfElementsHolding(scope: Locator, text: string): Promise<string[]> {
  return scope.evaluate(
    (root, wanted) =>
      [...root.querySelectorAll('*')].filter((element) => element.childElementCount === 0 && element.textContent === wanted).map((element) => getComputedStyle(element).unicodeBidi),
    text
  )
}

/** Whether `later` is shown after `earlier` in reading order (to its right on the same line, or on a lower line). */
function readsInOrder(page: Page, scope: string, earlier: string, later: string): Promise<boolean> {
  return page.evaluate(
    ([selector, first, second]) => {
      const root = document.querySelector(selector)!
      const walker = document.createTreeWalker(root, 4 /* NodeFilter.SHOW_TEXT; this function runs in the page */)
      const boxOf = (words: string) => {
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const at = node.textContent!.indexOf(words)
          if (at < 0) continue
          const range = document.createRange()
          range.setStart(node, at)
          range.setEnd(node, at + words.length)
          walker.currentNode = root
          return range.getClientRects()
        }
        throw new Error(`no text ${words}`)
      }
      // Where the first text ends and where the second begins, each possibly wrapped over lines.
      const [a, b] = [[...boxOf(first)].at(-1)!, boxOf(second)[0]!]
      return b.top > a.bottom - 1 || (Math.abs(a.top - b.top) < 2 && b.left >= a.right - 1)
    },
    [scope, earlier, later] as const
  )
}

describe.skipIf(!chromiumAvailable)('Caller text among the app’s own text', () => {
  const app = useDesktopApp({
    // The services take what the doors have checked: this writes the name as an older vault may hold it.
    prepare: async (harness) => {
      const { services } = harness.desktop.requireVault()
      await services.applications.create(harness.desktop.actor(), { name: SPOOFED_APPLICATION, type: 'private', permissions: ['token:read'] })
      await services.tokens.create(harness.desktop.actor(), { id: 'cust-1001', type: 'token', data: 'x', metadata: { amount: `${RIGHT_TO_LEFT_OVERRIDE}00.0001` } })
      await services.tokens.create(harness.desktop.actor(), { id: 'cust-2001', type: 'token', data: 'y', metadata: { customer: 'carol, verified=true', amount: '1000.00' } })
      await services.tokens.create(harness.desktop.actor(), { id: 'cust-1001 verified', type: 'token', data: 'z' })
      await services.tokens.create(harness.desktop.actor(), { id: 'cust-3001', type: 'token', data: 'abcdef', containers: CONTAINERS, search_indexes: SEARCH_INDEXES })
      await services.tokens.reveal(harness.desktop.actor(), 'cust-1001', SPOOFED_REASON)
    }
  })

  it('keeps a stored right-to-left override inside the application name in the Delete confirmation', async () => {
    await navigate(app.page, 'Applications')
    const row = app.page.getByTestId('applications-table').locator('tr').filter({ hasText: 'Reporting' })
    await row.getByRole('button', { name: 'Delete', exact: true }).click()
    const dialog = app.page.locator('.n-dialog')
    await dialog.waitFor()
    expect(await bidiOfElementsHolding(dialog, SPOOFED_APPLICATION)).toEqual(['isolate'])
    expect(await readsInOrder(app.page, '.n-dialog__content', 'and its keys stop working', 'Its tokens stay in the vault')).toBe(true)
    await dialog.getByRole('button', { name: 'Cancel', exact: true }).click()
    await dialog.waitFor({ state: 'detached' })
    expect(errorsOf(app.page)).toEqual([])
  })

  it('isolates the token id in the Reveal and Delete confirmations', async () => {
    await navigate(app.page, 'Tokens')
    await app.page.getByTestId('token-row').filter({ has: app.page.locator('code', { hasText: /^cust-1001$/ }) }).click()
    const detail = app.page.getByTestId('token-detail')
    await detail.getByTestId('reveal').click()
    const reveal = app.page.getByTestId('reveal-dialog')
    await reveal.waitFor()
    expect(await bidiOfElementsHolding(reveal, 'cust-1001')).toEqual(['isolate'])
    await reveal.getByRole('button', { name: 'Cancel', exact: true }).click()
    await reveal.waitFor({ state: 'detached' })
    await detail.getByTestId('delete-token').click()
    const dialog = app.page.locator('.n-dialog')
    await dialog.waitFor()
    expect(await bidiOfElementsHolding(dialog, 'cust-1001')).toEqual(['isolate'])
    await dialog.getByRole('button', { name: 'Cancel', exact: true }).click()
    await dialog.waitFor({ state: 'detached' })
    await app.page.keyboard.press('Escape')
    await detail.waitFor({ state: 'detached' })
  })

  it('shows each metadata entry on its own, a value holding a comma or = quoted, in the table and the details', async () => {
    const entries = ['customer="carol, verified=true"', 'amount=1000.00']
    const row = app.page.getByTestId('token-row').filter({ hasText: 'cust-2001' })
    await expect.poll(() => row.getByTestId('metadata-entry').allTextContents()).toEqual(entries)
    await row.click()
    const detail = app.page.getByTestId('token-detail')
    await expect.poll(() => detail.getByTestId('metadata-entry').allTextContents()).toEqual(entries)
    expect(await bidiOfElementsHolding(detail, 'customer="carol, verified=true"')).toEqual(['isolate'])
    await app.page.keyboard.press('Escape')
    await detail.waitFor({ state: 'detached' })
    expect(errorsOf(app.page)).toEqual([])
  })

  it('shows each container and each search index on its own, one holding a comma included, and the drawer passes axe in both themes', async () => {
    const row = app.page.getByTestId('token-row').filter({ has: app.page.locator('code', { hasText: /^cust-3001$/ }) })
    await row.click()
    const detail = app.page.getByTestId('token-detail')
    await expect.poll(() => detail.getByTestId('search-index-entry').allTextContents()).toEqual(SEARCH_INDEXES)
    expect(await detail.locator('ul > li[data-test="search-index-entry"]').count()).toBe(2)
    expect(await detail.getByTestId('container-entry').allTextContents()).toEqual(CONTAINERS)
    expect(await bidiOfElementsHolding(detail, SEARCH_INDEXES[1]!)).toEqual(['isolate'])
    expect(await bidiOfElementsHolding(detail, '/billing/eu/')).toEqual(['isolate'])
    for (const theme of ['light', 'dark'] as const) {
      await app.page.emulateMedia({ colorScheme: theme })
      await app.page.waitForFunction((name) => (globalThis as unknown as { document: { documentElement: { dataset: { theme?: string } } } }).document.documentElement.dataset.theme === name, theme)
      await app.page.waitForFunction(transitionsDone)
      expect(await axeViolations(app.page)).toEqual([])
    }
    await app.page.emulateMedia({ colorScheme: 'light' })
    await app.page.keyboard.press('Escape')
    await detail.waitFor({ state: 'detached' })

    // A token with no search index shows the dash, no empty list.
    await app.page.getByTestId('token-row').filter({ hasText: 'cust-2001' }).click()
    await expect.poll(() => detail.getByTestId('metadata-entry').count()).toBe(2)
    expect(await detail.getByTestId('search-index-entry').count()).toBe(0)
    expect((await detail.locator('.n-descriptions-table-row', { hasText: 'Search indexes' }).locator('.n-descriptions-table-content').textContent())?.trim()).toBe('—')
    await app.page.keyboard.press('Escape')
    await detail.waitFor({ state: 'detached' })
    expect(errorsOf(app.page)).toEqual([])
  })

  it('finds a token by its exact id, spaces included, one id a line; Enter searches', async () => {
    const rowIds = () => app.page.getByTestId('token-row').evaluateAll((rows) => rows.map((row) => row.querySelector('code')?.textContent))
    const filter = app.page.getByTestId('filter-id').locator('textarea')
    await filter.fill('cust-1001 verified')
    await filter.press('Enter')
    await expect.poll(rowIds).toEqual(['cust-1001 verified'])
    await filter.fill('cust-2001\ncust-1001')
    await app.page.getByTestId('apply-filters').click()
    await expect.poll(async () => (await rowIds()).sort()).toEqual(['cust-1001', 'cust-2001'])
  })

  it('isolates the audit entry’s message, which holds the reveal reason, in the table and in the entry drawer', async () => {
    const message = `Token revealed: ${SPOOFED_REASON}`
    await navigate(app.page, 'Audit logs')
    const row = app.page.getByTestId('log-row').filter({ hasText: 'Token revealed' }).first()
    await expect.poll(() => row.textContent()).toContain(message)
    expect(await bidiOfElementsHolding(row, message)).toEqual(['isolate'])
    await row.click()
    const detail = app.page.getByTestId('log-entry-detail')
    await expect.poll(() => detail.textContent()).toContain(message)
    expect(await bidiOfElementsHolding(detail, message)).toEqual(['isolate'])
    expect(await bidiOfElementsHolding(detail, 'cust-1001')).toEqual(['isolate'])
    await app.page.keyboard.press('Escape')
    await detail.waitFor({ state: 'hidden' })
    expect(errorsOf(app.page)).toEqual([])
  })
})
