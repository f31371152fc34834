import { ref, watch, type Ref } from 'vue'

/**
 * A form field that shows a stored value (a setting) and follows it when it is
 * read again (on opening the view, after any card saves, after a refused save),
 * except once the user has changed the field: then it keeps what was typed.
 *
 * Why: rewriting a field while it is being edited loses the edit, and it moves
 * the caret to the end of the new text, so a keyboard user's Ctrl+A and typing
 * appended to the stored value whenever a read landed between the two.
 */
export function useStoredField<T>(stored: () => T): Ref<T> {
  const field = ref(stored()) as Ref<T>
  watch(stored, (next, previous) => {
    if (field.value === previous) field.value = next
  })
  return field
}
