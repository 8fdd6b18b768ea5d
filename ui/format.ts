// Display formats of the pages' tables (times, durations, values). Pure.

/** `2024-03-01 08:15:02` in UTC, or an empty string for a missing value. */
export function formatTime(ms: unknown): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '';
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** `1h 02m 03s`, `4m 05s`, `12.3s`, `850ms`. */
export function formatDuration(ms: unknown): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}h ${pad(m)}m ${pad(s)}s` : `${m}m ${pad(s)}s`;
}

export function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map(text).join(', ');
  if (typeof value === 'object') {
    const kv = value as { name?: unknown; value?: unknown };
    if ('name' in kv && 'value' in kv) return `${String(kv.name)}=${String(kv.value)}`;
    return JSON.stringify(value);
  }
  return String(value);
}
