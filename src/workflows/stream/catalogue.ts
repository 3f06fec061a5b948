/** Status and title changes on the stream: published when they differ from what was last published. */
import { publishStreamEvent } from './publish';

const KEY = '__fhStreamCatalogue';
type Holder = { [KEY]?: { status?: string; title?: string } };

export function streamCatalogue(status: string, title: string | undefined): void {
  const seen = ((globalThis as Holder)[KEY] ??= {});
  if (seen.status !== status) {
    seen.status = status;
    publishStreamEvent({ type: 'status', status });
  }
  if (title !== undefined && seen.title !== title) {
    seen.title = title;
    publishStreamEvent({ type: 'title', title });
  }
}
