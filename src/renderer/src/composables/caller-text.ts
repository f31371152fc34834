/** Caller text (token ids, names, metadata) inside the app's own sentences. */
import { h, type VNode } from 'vue'

/**
 * A dialog's sentence with caller text in it, for naive-ui's `content`:
 * ``withCallerText`The data of ${id} is erased.` `` renders each value in a
 * `<bdi>`, so that a bidi override or embedding inside it stops at its edge
 * instead of reordering the rest of the sentence.
 */
export function withCallerText(sentence: TemplateStringsArray, ...callerTexts: string[]): () => VNode {
  return () => h('span', sentence.flatMap((text, index) => (index < callerTexts.length ? [text, h('bdi', callerTexts[index])] : [text])))
}
