/**
 * A column of a write batch as one PostgreSQL array parameter, which
 * `unnest` turns back into rows (postgres-batch.ts). Columns of the common
 * types go in the array's binary form, so PostgreSQL copies bytes, integers and
 * text as they are, without reading hex or digits; any other column, or one
 * holding a value of another kind than its type's (a number for a text column),
 * goes in the array's text form, where each element is read by the type's
 * input function exactly as a literal or a bound parameter is.
 */

/** A column's type, from the catalog: its OID (the binary form names it) and its SQL name. */
export interface ColumnType {
  oid: number
  name: string
}

/** A parameter as node-postgres sends it: a Buffer in binary form, a string in text form. */
export type ArrayParameter = Buffer | string

/** Type OIDs with a binary element encoder. */
const BOOL = 16
const BYTEA = 17
const INT8 = 20
const INT2 = 21
const INT4 = 23
const TEXT = 25
const VARCHAR = 1043
const UUID = 2950

const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const TWO_TO_32 = 2 ** 32

/** How one element of a type is written in binary: its size, and how to write it at an offset. */
interface ElementCodec {
  fits(value: unknown): boolean
  size(value: never): number
  write(buffer: Buffer, offset: number, value: never): void
}

const integer = (bytes: 2 | 4, min: number, max: number): ElementCodec => ({
  fits: (value) => Number.isInteger(value) && (value as number) >= min && (value as number) <= max,
  size: () => bytes,
  write: (buffer, offset, value: number) => void (bytes === 2 ? buffer.writeInt16BE(value, offset) : buffer.writeInt32BE(value, offset))
})

const text: ElementCodec = {
  fits: (value) => typeof value === 'string',
  size: (value: string) => Buffer.byteLength(value, 'utf8'),
  write: (buffer, offset, value: string) => void buffer.write(value, offset, 'utf8')
}

const CODECS = new Map<number, ElementCodec>([
  [BOOL, { fits: (value) => typeof value === 'boolean', size: () => 1, write: (buffer, offset, value: boolean) => void buffer.writeUInt8(value ? 1 : 0, offset) }],
  [
    BYTEA,
    {
      fits: (value) => value instanceof Uint8Array,
      size: (value: Uint8Array) => value.byteLength,
      write: (buffer, offset, value: Uint8Array) => buffer.set(value, offset)
    }
  ],
  [
    INT8,
    {
      fits: (value) => Number.isSafeInteger(value),
      size: () => 8,
      // Two 32-bit halves: a safe integer's high half fits, and no BigInt is made per value.
      write: (buffer, offset, value: number) => {
        const high = Math.floor(value / TWO_TO_32)
        buffer.writeInt32BE(high, offset)
        buffer.writeUInt32BE(value - high * TWO_TO_32, offset + 4)
      }
    }
  ],
  [INT2, integer(2, -32768, 32767)],
  [INT4, integer(4, -2147483648, 2147483647)],
  [TEXT, text],
  [VARCHAR, text],
  [
    UUID,
    {
      fits: (value) => typeof value === 'string' && UUID_TEXT.test(value),
      size: () => 16,
      write: (buffer, offset, value: string) => void buffer.write(value.replaceAll('-', ''), offset, 'hex')
    }
  ]
])

/** The header of a one-dimensional binary array: dimensions, null flag, element type, length, lower bound. */
const HEADER_BYTES = 20
/** Each element's length prefix (-1 for NULL). */
const LENGTH_BYTES = 4

/** `values` as an array parameter of `type`: binary when the type has an encoder every value fits, text otherwise. */
export function arrayParameter(type: ColumnType, values: readonly unknown[]): ArrayParameter {
  const codec = CODECS.get(type.oid)
  return (codec && binaryArray(type.oid, codec, values)) ?? textArray(values)
}

/** The binary array, or undefined if a value does not fit the codec. Each element's size is taken once. */
function binaryArray(oid: number, codec: ElementCodec, values: readonly unknown[]): Buffer | undefined {
  const sizes = new Int32Array(values.length)
  let size = HEADER_BYTES + LENGTH_BYTES * values.length
  let hasNull = false
  for (let index = 0; index < values.length; index++) {
    const value = values[index]
    if (value === null || value === undefined) {
      sizes[index] = -1
      hasNull = true
    } else if (codec.fits(value)) {
      size += sizes[index] = codec.size(value as never)
    } else {
      return undefined
    }
  }
  const buffer = Buffer.allocUnsafe(size)
  buffer.writeInt32BE(1, 0)
  buffer.writeInt32BE(hasNull ? 1 : 0, 4)
  buffer.writeInt32BE(oid, 8)
  buffer.writeInt32BE(values.length, 12)
  buffer.writeInt32BE(1, 16)
  let offset = HEADER_BYTES
  for (let index = 0; index < values.length; index++) {
    buffer.writeInt32BE(sizes[index], offset)
    offset += LENGTH_BYTES
    if (sizes[index] < 0) continue
    codec.write(buffer, offset, values[index] as never)
    offset += sizes[index]
  }
  return buffer
}

/** An array literal (`{"…",NULL}`), each element as the text its type's input function reads. */
function textArray(values: readonly unknown[]): string {
  return `{${values.map((value) => (value === null || value === undefined ? 'NULL' : `"${elementText(value).replace(QUOTED, '\\$&')}"`)).join(',')}}`
}

const QUOTED = /["\\]/g

/** A value as PostgreSQL's input functions read it; throws on anything the schema does not hold. */
function elementText(value: unknown): string {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('Only finite numbers are stored')
    return String(value)
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'string') return value
  if (value instanceof Uint8Array) return `\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`
  throw new TypeError(`Cannot store a ${typeof value} in PostgreSQL`)
}
