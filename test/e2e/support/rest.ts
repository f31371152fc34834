/** Calls the vault's REST service the way a local application does. */
export async function callRest(
  baseUrl: string,
  method: string,
  path: string,
  key: string,
  body?: unknown
): Promise<{ status: number; body: any }> {
  const response = await fetch(baseUrl + path, {
    method,
    headers: { 'svc-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined }
}
