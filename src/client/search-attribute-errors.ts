/**
 * The namespace lacks the SDK's search attributes: a server not started with `fh server` (a bare
 * `temporal server start-dev`), or a namespace they were never created on. Listing sessions and starting
 * one both need them; the server's own refusal names neither the fix nor the command that registers them.
 */
import { FabricError } from '../core/errors';
import { FH_SEARCH_ATTRIBUTES } from '../wire/search-attributes';

export class SearchAttributesMissingError extends FabricError {
  constructor(
    readonly namespace: string,
    readonly detail: string,
    /** What needs them: 'listed by' (listSessions) or 'started with' (startSession, sendPrompt). */
    use: 'listed by' | 'started with' = 'listed by',
  ) {
    super(
      'SEARCH_ATTRIBUTES_MISSING',
      `Namespace '${namespace}' does not have the search attributes sessions are ${use} (${detail}). ` +
        `Create them once per namespace: ${Object.entries(FH_SEARCH_ATTRIBUTES)
          .map(([name, type]) => `temporal operator search-attribute create --namespace ${namespace} --name ${name} --type ${type}`)
          .join('; ')} (fh server and the dev servers of this project register them at startup).`,
    );
  }
}

/**
 * The typed error for a call the server refused for a search attribute it does not know, or undefined
 * for any other failure. The client wraps the server's INVALID_ARGUMENT as a cause: a visibility query
 * says "column name 'FhKind' is not a valid search attribute", a workflow start "no mapping defined for
 * search attribute FhAgent".
 */
export function missingSearchAttributes(err: unknown, namespace: string, use: 'listed by' | 'started with'): SearchAttributesMissingError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const message = e.message;
    const quoted = Object.keys(FH_SEARCH_ATTRIBUTES).find((n) => message.includes(`'${n}'`));
    if (quoted && /is not a valid search attribute/i.test(message)) return new SearchAttributesMissingError(namespace, `${quoted} is not a valid search attribute there`, use);
    const unmapped = /no mapping defined for search attribute (\w+)/i.exec(message)?.[1];
    if (unmapped && unmapped in FH_SEARCH_ATTRIBUTES) return new SearchAttributesMissingError(namespace, `no mapping defined for search attribute ${unmapped}`, use);
  }
  return undefined;
}
