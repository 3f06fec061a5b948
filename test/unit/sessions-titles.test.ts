/** Session titles: the file-name-safe sanitiser, the fallback from the message, the title model's request, user titles. */
import { InvalidInputError } from '../../src/core/errors';
import {
  TITLE_MESSAGE_CHARS,
  fallbackTitle,
  parseTitleInput,
  sanitizeTitle,
  titleFromModelReply,
  titleRequest,
} from '../../src/core/sessions';

const UNSAFE = /[/\\:*?"<>|\p{Cc}]/u;

/** What every sanitised title must be, whatever went in. */
function expectSafe(title: string, maxWords = 5, maxChars = 60): void {
  expect(title).not.toMatch(UNSAFE);
  expect(title).not.toMatch(/^[.\s]/);
  expect(title).not.toMatch(/[.\s]$/);
  expect(title).not.toMatch(/\s{2}/);
  expect(title).not.toMatch(/[`*#~[\]]/);
  if (title) expect(title.split(' ').length).toBeLessThanOrEqual(maxWords);
  expect(Array.from(title).length).toBeLessThanOrEqual(maxChars);
}

describe('sanitizeTitle', () => {
  it.each([
    ['path traversal', '../../etc/passwd', 'etc passwd'],
    ['Windows path', 'C:\\Users\\me\\notes.txt', 'C Users me notes.txt'],
    ['quotes and markdown', '"Fix: the *bug*"', 'Fix the bug'],
    ['bold and code', '**Refactor** the `auth` module.', 'Refactor the auth module'],
    ['heading and lines', '# Heading\n\nsecond  line', 'Heading second line'],
    ['leading dots', '.hidden file', 'hidden file'],
    ['only dots', '...', ''],
    ['empty', '', ''],
    ['whitespace', ' \t\n ', ''],
    ['every unsafe character', 'a/b\\c:d*e?f"g<h>i|j', 'a b c d e'],
    ['trailing punctuation', 'Fix the bug!!!', 'Fix the bug'],
    ['dots inside words stay', 'Deploy v2.0 today.', 'Deploy v2.0 today'],
    ['apostrophes inside words stay', "don't break user's login", "don't break user's login"],
    ['single quotes around words go', "'quoted' title", 'quoted title'],
    ['smart quotes', '\u201cPlan the launch\u201d', 'Plan the launch'],
    ['guillemets', '\u00abBonjour le monde\u00bb', 'Bonjour le monde'],
    ['snake_case stays, _emphasis_ goes', 'read_file is _slow_', 'read_file is slow'],
    ['markdown link', '[Docs](http://example.com) update', 'Docs update'],
    ['list marker', '- fix the bug', 'fix the bug'],
    ['numbered list marker', '1. first step', 'first step'],
    ['strikethrough and quote block', '> ~~old~~ plan', 'old plan'],
    ['control characters', 'tab\there\u0000\u0007now', 'tab here now'],
    ['CRLF', 'one\r\ntwo', 'one two'],
    ['bidi override', 'invoice\u202Egnp.exe', 'invoicegnp.exe'],
    ['zero-width space and BOM', '\uFEFFzero\u200Bwidth', 'zerowidth'],
    ['lone surrogate', '\uD800abc', 'abc'],
    ['leading hyphen', '-rf everything', 'rf everything'],
    ['unicode letters', 'Über café naïve', 'Über café naïve'],
  ])('%s', (_what, raw, expected) => {
    const title = sanitizeTitle(raw);
    expect(title).toBe(expected);
    expectSafe(title);
  });

  it('keeps emoji, including joined sequences', () => {
    expect(sanitizeTitle('🚀 Launch the new site 🎉')).toBe('🚀 Launch the new site');
    expect(sanitizeTitle('👨\u200d👩\u200d👧 family trip plan')).toBe('👨\u200d👩\u200d👧 family trip plan');
    expect(sanitizeTitle('🎉🎉🎉')).toBe('🎉🎉🎉');
  });

  it('keeps at most 5 words of a 200-word input', () => {
    const words = Array.from({ length: 200 }, (_, i) => `word${i + 1}`);
    expect(sanitizeTitle(words.join(' '))).toBe('word1 word2 word3 word4 word5');
  });

  it('cuts at a word to stay within 60 characters', () => {
    const long = ['internationalisation', 'considerations', 'documentation', 'improvements', 'everywhere'];
    // 5 words are 74 characters; the first 4 are 63; the first 3 (49) fit.
    expect(sanitizeTitle(long.join(' '))).toBe('internationalisation considerations documentation');
    const exactly60 = `${'a'.repeat(29)} ${'b'.repeat(30)}`;
    expect(sanitizeTitle(exactly60)).toBe(exactly60);
  });

  it('cuts one over-long word at 60 characters (by code point, never splitting an emoji)', () => {
    expect(sanitizeTitle('x'.repeat(100))).toBe('x'.repeat(60));
    const emoji = sanitizeTitle('😀'.repeat(100));
    expect(Array.from(emoji)).toHaveLength(60);
    expect(emoji).not.toMatch(/\p{Cs}/u);
  });

  it('returns a safe title for a batch of nasty inputs', () => {
    const nasty = [
      '../../../../../../windows/system32',
      '....//....//etc',
      'CON',
      '  .  .  .  ',
      '\\\\server\\share\\file',
      'name<script>alert(1)</script>',
      '|||***???',
      '\u202E\u202D\u2066\u2069',
      '`rm -rf /`',
      'a'.repeat(500),
      ' . leading dot after space',
      'Title: Fix "it"?',
    ];
    for (const raw of nasty) expectSafe(sanitizeTitle(raw));
  });

  it('returns an empty string for a non-string', () => {
    expect(sanitizeTitle(undefined as unknown as string)).toBe('');
    expect(sanitizeTitle(42 as unknown as string)).toBe('');
  });
});

describe('fallbackTitle', () => {
  it('takes the first sentence of at least three words, capitalised', () => {
    expect(fallbackTitle('please fix the login bug in auth.ts, it fails on Safari')).toBe('Please fix the login bug');
    expect(fallbackTitle('Hi!\nCan you refactor the billing module to use zod?')).toBe('Can you refactor the billing');
    expect(fallbackTitle('Why is CI red? It was green yesterday.')).toBe('Why is CI red');
  });

  it('skips code blocks', () => {
    expect(fallbackTitle('```ts\nconst x = await load();\n```\nwhy does this crash on startup')).toBe('Why does this crash on');
  });

  it('uses what there is when the message is short, and Untitled session when there is nothing', () => {
    expect(fallbackTitle('Fix tests')).toBe('Fix tests');
    expect(fallbackTitle('```\nls\n```')).toBe('Ls');
    expect(fallbackTitle('')).toBe('Untitled session');
    expect(fallbackTitle('  \n ')).toBe('Untitled session');
    expect(fallbackTitle('?!... ***')).toBe('Untitled session');
    expect(fallbackTitle(undefined as unknown as string)).toBe('Untitled session');
  });

  it('is deterministic and already sanitised', () => {
    const message = '../../etc/passwd: "please" read it and *summarise* it for me';
    const title = fallbackTitle(message);
    expect(fallbackTitle(message)).toBe(title);
    expect(sanitizeTitle(title)).toBe(title);
    expectSafe(title);
  });
});

describe('titleRequest', () => {
  it('asks for 3-5 words, no quotes, no final punctuation, and shows the message', () => {
    const request = titleRequest('Please migrate the billing service to Postgres');
    expect(request.system).toMatch(/3 to 5 words/);
    expect(request.system).toMatch(/no quotes/);
    expect(request.system).toMatch(/no punctuation at the end/);
    expect(request.userText).toContain('Please migrate the billing service to Postgres');
    expect(request.maxTokens).toBeGreaterThan(0);
    expect(request.maxTokens).toBeLessThanOrEqual(64);
  });

  it(`includes only the first ${TITLE_MESSAGE_CHARS} characters of a long message`, () => {
    const request = titleRequest(`${'a'.repeat(TITLE_MESSAGE_CHARS)}ZZZ${'b'.repeat(50_000)}`);
    expect(request.userText).toContain('a'.repeat(TITLE_MESSAGE_CHARS));
    expect(request.userText).not.toContain('ZZZ');
    expect(request.userText.length).toBeLessThan(TITLE_MESSAGE_CHARS + 300);
    expect(titleRequest('😀'.repeat(5000)).userText).not.toMatch(/\p{Cs}/u);
  });
});

describe('titleFromModelReply', () => {
  const message = 'Can you look at the flaky upload test';

  it('sanitises the first line and drops a Title: prefix', () => {
    expect(titleFromModelReply('Fix Login Redirect Bug', message)).toBe('Fix Login Redirect Bug');
    expect(titleFromModelReply('"Fix the login bug."', message)).toBe('Fix the login bug');
    expect(titleFromModelReply('\nTitle: Billing refactor plan\n\nI chose this because…', message)).toBe('Billing refactor plan');
    expect(titleFromModelReply('**Title:** Upload test flakiness', message)).toBe('Upload test flakiness');
  });

  it('falls back to the message when the reply leaves nothing', () => {
    expect(titleFromModelReply('', message)).toBe(fallbackTitle(message));
    expect(titleFromModelReply('***', message)).toBe('Can you look at the');
  });
});

describe('parseTitleInput', () => {
  it('sanitises a user title, allowing more words than a generated one', () => {
    expect(parseTitleInput('My session')).toBe('My session');
    expect(parseTitleInput('  ../secret  ')).toBe('secret');
    const eight = 'Investigate the flaky integration test on CI runners';
    expect(parseTitleInput(eight)).toBe(eight);
    const long = parseTitleInput('word '.repeat(100));
    expect(Array.from(long).length).toBeLessThanOrEqual(100);
    expectSafe(long, Infinity, 100);
  });

  it.each([
    ['number', 42],
    ['null', null],
    ['undefined', undefined],
    ['empty', ''],
    ['only dots', '...'],
    ['only unsafe characters', '///:::***'],
  ])('refuses %s with INVALID_INPUT naming title', (_what, title) => {
    let error: unknown;
    try {
      parseTitleInput(title);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ code: 'INVALID_INPUT', field: 'title' });
  });
});
