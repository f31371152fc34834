import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { AuditArchiveStatus } from '@shared/ipc'
import { api } from '@renderer/api'
import { useAction } from '@renderer/composables/useAction'
import { formatDateTime } from '@renderer/composables/format'

/** Settings → Audit archive: the archive folder, the retention, the last archive and "Archive now". */
export const useAuditArchiveStore = defineStore('auditArchive', () => {
  const status = ref<AuditArchiveStatus>()
  const reading = useAction()
  const { busy: archiving, run } = useAction()

  async function load(): Promise<void> {
    await reading.run('Loading the audit archive', async () => {
      status.value = await api().logs.archiveStatus()
    })
  }

  /** Archives the entries created before `before` (ISO 8601) and prunes them; the service keeps answering meanwhile. */
  function archive(before: string): Promise<boolean> {
    return run(
      'Archiving the audit log',
      () => api().logs.archive(before),
      {
        success: (archived) =>
          archived
            ? { title: `${archived.entries} audit entries archived`, detail: `Moved to ${archived.file}; the rest of the log still verifies.` }
            : { title: 'Nothing to archive', detail: `No audit entry was created before ${formatDateTime(before)}.` },
        after: load
      }
    )
  }

  return { status, archiving, load, archive }
})
