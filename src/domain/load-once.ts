/**
 * A module (or anything else) loaded on first use, not at start: every caller shares the one load,
 * and a failed load is tried again by the next call. Heavy packages an instance may never need
 * (sharp, the MCP SDK, nodemailer, web-push) are loaded through this.
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    if (!loading) {
      const attempt = load();
      loading = attempt;
      attempt.catch(() => {
        if (loading === attempt) loading = undefined;
      });
    }
    return loading;
  };
}
