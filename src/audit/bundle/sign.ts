/**
 * Ed25519 signatures over a bundle's manifest, with node:crypto only. The signature file carries the
 * public key and its fingerprint (sha256 of the key's DER), so a bundle shows who signed it; an auditor
 * who holds the signer's public key checks it is that one (`fh audit verify --public-key`).
 */
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { BundleSignatureError } from './errors';
import type { BundleSignature } from './format';

export function keyFingerprint(key: KeyObject): string {
  const der = key.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(der).digest('hex')}`;
}

/** A public key from PEM text (a public key, or a private key whose public half is taken). */
export function publicKeyFrom(pem: string | Buffer): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (err) {
    throw new BundleSignatureError(`the public key is not a PEM key (${(err as Error).message})`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new BundleSignatureError(`the public key is ${key.asymmetricKeyType ?? 'not asymmetric'}, not Ed25519`);
  return key;
}

export function signManifest(manifest: Uint8Array, privateKeyPem: string | Buffer, signedAt: Date = new Date()): BundleSignature {
  let key: KeyObject;
  try {
    key = createPrivateKey(privateKeyPem);
  } catch (err) {
    throw new BundleSignatureError(`the signing key is not a PEM private key (${(err as Error).message})`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new BundleSignatureError(`the signing key is ${key.asymmetricKeyType}, not Ed25519`);
  const pub = createPublicKey(key);
  return {
    algorithm: 'ed25519',
    keyFingerprint: keyFingerprint(pub),
    publicKey: pub.export({ type: 'spki', format: 'pem' }).toString(),
    signedAt: signedAt.toISOString(),
    signature: sign(null, manifest, key).toString('base64'),
  };
}

/**
 * Throws BundleSignatureError unless `sig` verifies over `manifest` with the key it carries and, when
 * `trusted` is given, that key is the trusted one.
 */
export function checkSignature(manifest: Uint8Array, sig: BundleSignature, trusted?: KeyObject): void {
  const carried = publicKeyFrom(sig.publicKey);
  if (keyFingerprint(carried) !== sig.keyFingerprint) throw new BundleSignatureError(`the carried key's fingerprint is ${keyFingerprint(carried)}, not the recorded ${sig.keyFingerprint}`);
  if (trusted && keyFingerprint(trusted) !== sig.keyFingerprint) {
    throw new BundleSignatureError(`signed with key ${sig.keyFingerprint}, not the given public key ${keyFingerprint(trusted)}`);
  }
  if (!verify(null, manifest, trusted ?? carried, Buffer.from(sig.signature, 'base64'))) {
    throw new BundleSignatureError(`it does not verify over manifest.json (key ${sig.keyFingerprint}): the manifest or the signature was altered`);
  }
}
