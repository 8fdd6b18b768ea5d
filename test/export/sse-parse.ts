// A literal implementation of the WHATWG event-stream interpretation rules, for checking bytes
// written by the server independently of any client library.

export interface ParsedEvent {
  readonly id: string;
  readonly event: string;
  readonly data: string;
}

export function parseSseText(text: string): { events: ParsedEvent[]; comments: string[] } {
  const events: ParsedEvent[] = [];
  const comments: string[] = [];
  let data: string[] = [];
  let event = '';
  let lastId = '';
  let sawData = false;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (sawData) events.push({ id: lastId, event: event || 'message', data: data.join('\n') });
      data = [];
      event = '';
      sawData = false;
      continue;
    }
    if (line.startsWith(':')) {
      comments.push(line.slice(1));
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      data.push(value);
      sawData = true;
    } else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) lastId = value;
  }
  return { events, comments };
}
