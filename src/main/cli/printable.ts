/**
 * Text the CLI prints that it did not write itself (names from the vault, fields of a file), safe for a
 * terminal: control characters (escapes, line breaks) shown as \u escapes, so it cannot forge lines around it.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
