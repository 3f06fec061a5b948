/** How `fh chat` draws: ANSI styles (or none) and one-line JSON. */

/** ANSI styles, or nothing (not a terminal, or NO_COLOR). */
export function styles(on: boolean) {
  const wrap = (open: string) => (t: string) => (on ? `\x1b[${open}m${t}\x1b[0m` : t);
  return { dim: wrap('2'), bold: wrap('1'), red: wrap('31'), yellow: wrap('33'), cyan: wrap('36'), green: wrap('32') };
}

export function compactJson(value: unknown, max: number): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? 'undefined';
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
