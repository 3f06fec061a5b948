/**
 * `/attach <file>` in `fh chat`: files staged for the next message. Checked when staged (exists, a type a
 * model request can carry) and again, with the size limits, when the message is sent (client/attachments).
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AttachmentUnsupportedTypeError } from '../../core/attachments';
import { mediaTypeOf, type PromptAttachment } from '../../client/attachments';
import { usage } from '../errors';

export class StagedAttachments {
  private files: PromptAttachment[] = [];

  /** Stages `file` (a path; `~` is the home directory) and says what was staged. */
  async add(file: string): Promise<string> {
    const p = path.resolve(file.replace(/^~(?=$|\/)/, os.homedir()).replace(/^(["'])(.*)\1$/, '$2'));
    const stat = await fs.stat(p).catch(() => undefined);
    if (!stat?.isFile()) throw usage(`/attach: ${file} is not a file`);
    const mediaType = mediaTypeOf(p);
    if (!mediaType) throw new AttachmentUnsupportedTypeError('/attach', path.extname(p) || '(no extension)');
    this.files.push({ path: p });
    return `attached ${path.basename(p)} (${mediaType}, ${stat.size} bytes): sent with your next message`;
  }

  /** The staged files, as the next message's options; they are sent once. */
  take(): { attachments?: PromptAttachment[] } {
    const files = this.files;
    this.files = [];
    return files.length ? { attachments: files } : {};
  }
}
