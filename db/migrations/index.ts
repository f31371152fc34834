import type { Knex } from 'knex'
import * as initialSchema from './20261125000000_initial_schema'
import * as mailOutboxKeyVersion from './20261126100000_mail_outbox_key_version'
import * as logEntityIndex from './20261127000000_log_entity_index'
import * as keyRotation from './20261128000000_key_rotation'
import * as auditChain from './20261129000000_audit_chain'
import * as auditAnchor from './20261130000000_audit_anchor'
import * as listIndexes from './20261201000000_list_indexes'
import * as logEntityOrderAndHourCounts from './20261203000000_log_entity_order_and_hour_counts'
import * as postgresInsertionOrder from './20261205000000_postgres_insertion_order'
import * as severalInstances from './20261205500000_several_instances'
import * as tokenIntents from './20261211000000_token_intents'
import * as applicationKeys from './20261212000000_application_keys'
import * as idempotency from './20261213000000_idempotency'
import * as compactTenantKey from './20261214000000_compact_tenant_key'
import * as binaryHashes from './20261215000000_binary_hashes'
import * as metadataOneTree from './20261216000000_metadata_one_tree'
import * as binaryActorIds from './20261217000000_binary_actor_ids'
import * as actorTypeCode from './20261218000000_actor_type_code'
import * as defaultFingerprintExpression from './20261219000000_default_fingerprint_expression'
import * as searchIndexOrder from './20261220000000_search_index_order'
import * as webhooks from './20261221000000_webhooks'
import * as logTraceId from './20261222000000_log_trace_id'
import * as postgresHotTablesWithoutTenantChecks from './20261223000000_postgres_hot_tables_without_tenant_checks'
import * as postgresAuditChainTurn from './20261224000000_postgres_audit_chain_turn'
import * as postgresEntityIndexOnLogs from './20261225000000_postgres_entity_index_on_logs'
import * as webhookDeliveryQueues from './20261226000000_webhook_delivery_queues'
import * as webhookAttemptLeases from './20261227000000_webhook_attempt_leases'
import * as tokenContainers from './20261228000000_token_containers'
import * as asciiFoldedEmails from './20261229000000_ascii_folded_emails'
import * as postgresTokenIdsInByteOrder from './20261230000000_postgres_token_ids_in_byte_order'
import * as idempotencyCommits from './20261231000000_idempotency_commits'

/**
 * Every migration, in order. Bundled builds cannot scan a folder, so new
 * migrations are listed here explicitly.
 */
export const migrations: Record<string, Knex.Migration> = {
  '20261125000000_initial_schema': initialSchema,
  '20261126100000_mail_outbox_key_version': mailOutboxKeyVersion,
  '20261127000000_log_entity_index': logEntityIndex,
  '20261128000000_key_rotation': keyRotation,
  '20261129000000_audit_chain': auditChain,
  '20261130000000_audit_anchor': auditAnchor,
  '20261201000000_list_indexes': listIndexes,
  '20261203000000_log_entity_order_and_hour_counts': logEntityOrderAndHourCounts,
  '20261205000000_postgres_insertion_order': postgresInsertionOrder,
  '20261205500000_several_instances': severalInstances,
  '20261211000000_token_intents': tokenIntents,
  '20261212000000_application_keys': applicationKeys,
  '20261213000000_idempotency': idempotency,
  '20261214000000_compact_tenant_key': compactTenantKey,
  '20261215000000_binary_hashes': binaryHashes,
  '20261216000000_metadata_one_tree': metadataOneTree,
  '20261217000000_binary_actor_ids': binaryActorIds,
  '20261218000000_actor_type_code': actorTypeCode,
  '20261219000000_default_fingerprint_expression': defaultFingerprintExpression,
  '20261220000000_search_index_order': searchIndexOrder,
  '20261221000000_webhooks': webhooks,
  '20261222000000_log_trace_id': logTraceId,
  '20261223000000_postgres_hot_tables_without_tenant_checks': postgresHotTablesWithoutTenantChecks,
  '20261224000000_postgres_audit_chain_turn': postgresAuditChainTurn,
  '20261225000000_postgres_entity_index_on_logs': postgresEntityIndexOnLogs,
  '20261226000000_webhook_delivery_queues': webhookDeliveryQueues,
  '20261227000000_webhook_attempt_leases': webhookAttemptLeases,
  '20261228000000_token_containers': tokenContainers,
  '20261229000000_ascii_folded_emails': asciiFoldedEmails,
  '20261230000000_postgres_token_ids_in_byte_order': postgresTokenIdsInByteOrder,
  '20261231000000_idempotency_commits': idempotencyCommits
}
