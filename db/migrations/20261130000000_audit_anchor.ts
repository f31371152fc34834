import type { Knex } from 'knex'

/**
 * The audit chain's anchor: after an archive prunes the oldest entries, the
 * remaining chain starts from the last archived entry's seq and MAC, kept
 * beside the checkpoint and covered by its tag. Seq 0 with no MAC is the
 * chain's genesis (nothing archived yet).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('log_chain', (t) => {
    t.bigInteger('anchor_seq').notNullable().defaultTo(0)
    t.binary('anchor_mac')
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('log_chain', (t) => {
    t.dropColumn('anchor_mac')
    t.dropColumn('anchor_seq')
  })
}
