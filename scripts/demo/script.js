// What the scripted fake Anthropic server answers in the demo when no ANTHROPIC_API_KEY is set.
// It is a script, not a model: each step is one canned reply to one model call.
const { callTools, say } = require('../../dist/testing');

exports.TASK =
  'Create notes.md with three bullet points on why durable execution matters for agents, count its lines with bash, ' +
  'fix the typo "reliabel" with edit_file, then read the file back and report.';

exports.scriptedReplies = () => [
  callTools({
    name: 'write_file',
    input: {
      path: 'notes.md',
      content:
        '# Durable agents\n- A crash mid-task resumes where it stopped, not from scratch\n- Every model and tool call is recorded, so runs are reliabel and auditable\n- Long sessions survive deploys and restarts\n',
    },
  }),
  callTools({ name: 'bash', input: { command: 'wc -l notes.md' } }),
  callTools({ name: 'edit_file', input: { path: 'notes.md', old_string: 'reliabel', new_string: 'reliable' } }),
  callTools({ name: 'read_file', input: { path: 'notes.md' } }),
  say('notes.md has a heading and three bullet points (4 lines); I fixed "reliabel" → "reliable" and read it back to confirm.'),
];
