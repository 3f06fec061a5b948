/** The session catalogue's pure logic: ids, titles, statuses, labels, settings and permissions. */
export * from './errors';
export * from './ids';
export * from './titles';
export * from './statuses';
export * from './labels';
export * from './settings';
export * from './permissions';
export * from './plans';
