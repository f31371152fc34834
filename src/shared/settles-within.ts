/** Whether `work` settles within `ms`; if it rejects first, so does this. */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)))
  try {
    return await Promise.race([work.then(() => true), expired])
  } finally {
    clearTimeout(timer)
  }
}
