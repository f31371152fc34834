/**
 * zod schemas → our ValidationError. One schema gives the check, the field
 * paths of the errors and the TypeScript type.
 */
import { z } from 'zod'
import { ValidationError, type FieldErrors } from './errors'

/** Formats a path the way clients read it: `rules[0].priority`, `[3].data.number`. */
export function formatPath(path: ReadonlyArray<PropertyKey>, prefix = ''): string {
  let out = prefix
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`
    else out += out ? `.${String(segment)}` : String(segment)
  }
  return out || '(body)'
}

/** Adds a message to a field-errors map. */
export function addFieldError(errors: FieldErrors, path: string, message: string): void {
  // Own properties only: an unknown field named `toString` or `__proto__` is still just a field.
  if (Object.hasOwn(errors, path)) errors[path].push(message)
  else Object.defineProperty(errors, path, { value: [message], enumerable: true, writable: true, configurable: true })
}

/** Converts zod issues to field errors. Messages never echo the rejected value. */
export function zodFieldErrors(error: z.ZodError, prefix = ''): FieldErrors {
  const errors: FieldErrors = {}
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) addFieldError(errors, formatPath([...issue.path, key], prefix), 'is not a known field')
    } else if (issue.code === 'invalid_key') {
      // zod sums a bad record key up as "Invalid key in record"; its own checks say what is wrong.
      for (const keyIssue of issue.issues) addFieldError(errors, formatPath(issue.path, prefix), keyIssue.message)
    } else {
      addFieldError(errors, formatPath(issue.path, prefix), issue.message)
    }
  }
  return errors
}

/** Parses `value` with `schema`, or throws a 400 naming every bad field. */
export function parse<S extends z.ZodType>(schema: S, value: unknown, prefix = ''): z.infer<S> {
  const result = schema.safeParse(value)
  if (!result.success) throw new ValidationError(zodFieldErrors(result.error, prefix))
  return result.data
}
