/** What the prompt enhancer returns (the Node code is src/activities/enhance/; the activity contract names it). */
export interface RepoIntro {
  name?: string;
  description?: string;
  readmeLine?: string;
  topLevel: string[];
  frameworks: string[];
  languages: string[];
  workspaces: string[];
}

export interface EnhanceResult {
  /** The prompt to send. */
  prompt: string;
  /** True when the model rewrote it; false when it is the draft with the context appended. */
  rewritten: boolean;
  /** What was attached, for a UI's badge: the repo intro, the files found, the symbols looked up. */
  attached: { intro?: RepoIntro; files: string[]; symbols: string[] };
  /** Steps that failed (the result is still usable). */
  problems: Array<{ step: 'intro' | 'search' | 'model'; message: string }>;
}
