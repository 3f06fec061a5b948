/**
 * @aws-sdk/client-s3 is an optional peer dependency: a project without it that makes an S3Store gets a
 * typed error saying what to install (not a module-not-found from inside a call), and importing the
 * entries does not need it.
 */
jest.mock('@aws-sdk/client-s3', () => {
  const err = new Error("Cannot find module '@aws-sdk/client-s3' from 'src/activities/stores/s3-store.ts'") as NodeJS.ErrnoException;
  err.code = 'MODULE_NOT_FOUND';
  throw err;
});

describe('S3Store without the AWS SDK installed', () => {
  it('the client and worker entries load, and S3Store says to install @aws-sdk/client-s3', () => {
    const client = require('@fabric-harness/sdk/client') as typeof import('@fabric-harness/sdk/client');
    require('@fabric-harness/sdk/worker');
    let thrown: unknown;
    try {
      new client.S3Store({ bucket: 'my-bucket' });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(client.S3ClientMissingError);
    expect(thrown).toMatchObject({ code: 'S3_CLIENT_MISSING', message: expect.stringContaining('npm install @aws-sdk/client-s3') });
  });
});
