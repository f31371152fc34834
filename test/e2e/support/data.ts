/** Generated test data. */

/** A valid 16-digit card number (Luhn) made from `seed`. */
export function cardNumber(seed: number): string {
  const body = `4${String(seed).padStart(14, '0')}`
  let sum = 0
  for (let i = body.length - 1, double = true; i >= 0; i--, double = !double) {
    let digit = Number(body[i])
    if (double && (digit *= 2) > 9) digit -= 9
    sum += digit
  }
  return body + String((10 - (sum % 10)) % 10)
}

/** `customer,card_number,ssn` with `rows` data rows. */
export function customersCsv(rows: number): string {
  const lines = ['customer,card_number,ssn']
  for (let i = 0; i < rows; i++) lines.push(`cus_${i},${cardNumber(i)},${String(100_000_000 + i * 7).slice(0, 9)}`)
  return lines.join('\n') + '\n'
}
