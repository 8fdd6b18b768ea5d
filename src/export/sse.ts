// Server-sent-event framing (WHATWG HTML, "Server-sent events"): one message is a block of
// `field: value` lines ended by a blank line; a line starting with `:` is a comment that clients
// ignore (our heartbeat). Values must not contain line breaks, so JSON data (which escapes them)
// always fits on one `data:` line; multi-line text is split over several `data:` lines.

export interface SseMessage {
  readonly id: string;
  readonly event: string;
  readonly data: string;
}

const LINE_BREAK = /\r\n|\r|\n/;

function assertSingleLine(field: string, value: string): void {
  if (LINE_BREAK.test(value)) throw new Error(`SSE ${field} must not contain a line break: ${JSON.stringify(value)}`);
}

/** The wire form of one message: `id`, `event`, then one `data` line per line of data. */
export function formatMessage(message: SseMessage): string {
  assertSingleLine('id', message.id);
  assertSingleLine('event', message.event);
  // The common case (JSON) has no line break: one concatenation, no split.
  const data = LINE_BREAK.test(message.data) ? message.data.split(LINE_BREAK).join('\ndata: ') : message.data;
  return `id: ${message.id}\nevent: ${message.event}\ndata: ${data}\n\n`;
}

/** A comment block (`: text`), ignored by clients; keeps idle connections and proxies alive. */
export function formatComment(text = ''): string {
  assertSingleLine('comment', text);
  return text === '' ? ':\n\n' : `: ${text}\n\n`;
}
