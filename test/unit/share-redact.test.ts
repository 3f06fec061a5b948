/**
 * The shared page's redaction rule (core/share/redact.ts) and its escaping: token shapes, named
 * secrets, credentials, the sandbox path and the home directory; every character of the conversation
 * that could open markup is escaped.
 */
import { escapeHtml, renderSharePage } from '../../src/core/share/page';
import { redactText } from '../../src/core/share/redact';

describe('redactText', () => {
  it('hides tokens by their shape', () => {
    const text = [
      'anthropic sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345',
      'openai sk-proj-abcdefghijklmnopqrstuvwxyz',
      'github ghp_abcdefghijklmnopqrstuvwxyz0123456789 and github_pat_11ABCDEFGHIJKLMNOPQRSTUV_xyz',
      'aws AKIAABCDEFGHIJKLMNOP',
      'jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
      'slack xoxb-1234567890-abcdefghij',
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----',
    ].join('\n');
    const out = redactText(text);
    expect(out).not.toMatch(/sk-ant-api03|sk-proj-abc|ghp_abc|github_pat_11|AKIAABC|eyJhbGci|xoxb-123|b3BlbnNzaC1rZXkt/);
    expect(out.match(/\[redacted\]/g)).toHaveLength(8);
  });

  it('hides the values of secret-named settings and credentials', () => {
    expect(redactText('DB_PASSWORD=hunter2222 GITHUB_TOKEN: "abcd1234" plain=visible')).toBe('DB_PASSWORD=[redacted] GITHUB_TOKEN: "[redacted]" plain=visible');
    expect(redactText('{"apiKey": "abcdef123456", "name": "shop"}')).toBe('{"apiKey": "[redacted]", "name": "shop"}');
    expect(redactText('Authorization: Bearer abc.def.ghi123456')).toBe('Authorization: Bearer [redacted]');
  });

  it('replaces the sandbox path, extra paths and the home directory', () => {
    expect(redactText('/home/ann/work/repo/src/a.ts and /home/ann/.ssh and /srv/store/x', { workdir: '/home/ann/work/repo', paths: ['/srv/store'], home: '/home/ann' })).toBe(
      '<workdir>/src/a.ts and ~/.ssh and <path>/x',
    );
  });
});

describe('the page', () => {
  it('escapes every character that could open markup, in every place conversation text goes', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&`)).toBe('&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;');
    const html = renderSharePage({
      title: '<script>t</script>',
      sharedAt: 0,
      entries: [
        { type: 'user', text: '<img src=x onerror=alert(1)>' },
        { type: 'assistant', content: [{ type: 'text', text: '</pre><script>a</script>' }, { type: 'tool_use', id: 't1', name: '<b>tool</b>', input: { x: '<svg onload=1>' } }] },
        { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 't1', content: '<iframe src=javascript:1>', is_error: true }] },
      ],
    });
    expect(html).not.toMatch(/<(script|img|svg|iframe|b)\b/i);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });
});
