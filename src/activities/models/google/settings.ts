/**
 * A Google Gemini connection's settings (the Gemini Developer API through `@google/genai`). Plain
 * data, no SDK types: the worker's public options name it, and an app without the SDK must compile.
 */

/** Gemini's API (generativelanguage.googleapis.com) through the official `@google/genai` SDK. */
export interface GoogleModelConnection {
  provider: 'google';
  /** Default: GOOGLE_API_KEY, then GEMINI_API_KEY (the order the SDK reads them in). */
  apiKey?: string | undefined;
  /** Another endpoint (a proxy, the fake): the SDK's `httpOptions.baseUrl`. Default: GOOGLE_GEMINI_BASE_URL, then Google's. */
  baseURL?: string | undefined;
}

/** The key a connection uses: its own, else the environment's, in the SDK's order. */
export function geminiApiKey(settings: Pick<GoogleModelConnection, 'apiKey'>): string | undefined {
  const env = (name: string) => process.env[name]?.trim() || undefined;
  return settings.apiKey ?? env('GOOGLE_API_KEY') ?? env('GEMINI_API_KEY');
}
