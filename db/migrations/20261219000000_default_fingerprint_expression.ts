import type { Knex } from 'knex'

/**
 * A token whose fingerprint expression is its type's default stores '' for it
 * instead of repeating the expression (22 bytes for `{{ data | stringify }}`).
 * An expression that really is '' is stored as '{{', which no stored
 * expression can be (it does not compile). Storage reads both back
 * (tokens.repository.ts).
 *
 * These are the expressions '' stands for, whatever a type's default later
 * becomes: storage reads them from here. (A changed default would only make new
 * tokens store it in full; test/storage/migrations.test.ts holds the lists equal.)
 */
export const DEFAULT_FINGERPRINT_EXPRESSIONS: Readonly<Record<string, string>> = {
  token: '{{ data | stringify }}',
  card: '{{ data.number }}',
  bank: '{{ data.account_number }}|{{ data.routing_number }}'
}

/** What a stored expression of '' is written as. */
export const EMPTY_EXPRESSION = '{{'

export async function up(knex: Knex): Promise<void> {
  await knex('tokens').where('fingerprint_expression', '').update({ fingerprint_expression: EMPTY_EXPRESSION })
  for (const [type, expression] of Object.entries(DEFAULT_FINGERPRINT_EXPRESSIONS)) {
    await knex('tokens').where({ type, fingerprint_expression: expression }).update({ fingerprint_expression: '' })
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const [type, expression] of Object.entries(DEFAULT_FINGERPRINT_EXPRESSIONS)) {
    await knex('tokens').where({ type, fingerprint_expression: '' }).update({ fingerprint_expression: expression })
  }
  await knex('tokens').where('fingerprint_expression', EMPTY_EXPRESSION).update({ fingerprint_expression: '' })
}
