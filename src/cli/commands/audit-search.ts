import type { Command } from '../context';
export const searchCommand: Command = { name: 'audit search', summary: 'todo', usage: [], connects: false, options: {}, examples: [], run: async () => 0 };
