/**
 * Types that a public signature of this entry reaches (a method's result, an option's field, ...),
 * exported so that code compiled with `declaration: true` can name them (TS2883 otherwise).
 * test/unit/public-types.test.ts walks the built .d.ts and fails on any such type left unexported.
 */
export type { ContextEditType } from './anthropic/fake-anthropic-context-edits';
export type { Listening, PlatformFake, PlatformFakeOptions, PlatformReply } from './anthropic/platform-fake';
