/**
 * Every public URL the service hands out, built in one place from BASE_URL (status URLs, status
 * pages; attachment URLs later). Task ids are [a-z0-9-] when they come from the store, but anything
 * taken from a request is encoded, so a URL can never be bent by the id it carries.
 */

/** The API status URL of a task: what `Location` and `status_url` name. */
export function statusUrl(baseUrl: string, taskId: string): string {
  return `${baseUrl}/api/v1/tasks/${encodeURIComponent(taskId)}`;
}

/** The site-relative path of a task's human status page. */
export function statusPagePath(taskId: string): string {
  return `/tasks?id=${encodeURIComponent(taskId)}`;
}

/** The absolute URL of a task's human status page. */
export function statusPageUrl(baseUrl: string, taskId: string): string {
  return `${baseUrl}${statusPagePath(taskId)}`;
}

/** Where anyone holding the task id downloads a delivered file (contract "Evidence"). */
export function attachmentUrl(baseUrl: string, taskId: string, attachmentId: string): string {
  return `${baseUrl}/api/v1/tasks/${encodeURIComponent(taskId)}/attachments/${encodeURIComponent(attachmentId)}`;
}

/** The site-relative download path of a file, for the service's own pages. */
export function attachmentPath(taskId: string, attachmentId: string): string {
  return `/api/v1/tasks/${encodeURIComponent(taskId)}/attachments/${encodeURIComponent(attachmentId)}`;
}
