// Runs the published ExtraHorizon JavaScript SDK against a running Tacho, the way the
// measurement apps use it. Prints one line per step and exits non-zero on the first failure.
//
// Environment: TACHO_URL (http://localhost:PORT: the SDK speaks plain HTTP only to a host
// named localhost), TACHO_EMAIL, TACHO_PASSWORD, TACHO_FIXTURE (a measurement payload file),
// NODE_PATH (where @extrahorizon/javascript-sdk is installed).
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const { createOAuth2Client, rqlBuilder, InvalidRqlError, ResourceUnknownError } =
  require('@extrahorizon/javascript-sdk');

const url = process.env.TACHO_URL;
const email = process.env.TACHO_EMAIL;
const password = process.env.TACHO_PASSWORD;
const payload = JSON.parse(fs.readFileSync(process.env.TACHO_FIXTURE, 'utf8'));

let step = 0;
async function check(name, body) {
  step += 1;
  try {
    await body();
    console.log(`ok ${step} - ${name}`);
  } catch (error) {
    console.log(`not ok ${step} - ${name}`);
    console.log(error && error.stack ? error.stack : error);
    if (error && error.response) {
      console.log('response:', error.response.status, JSON.stringify(error.response.data));
    }
    console.log('FAIL');
    process.exit(1);
  }
}

function millis(value) {
  return value instanceof Date ? value.getTime() : new Date(value).getTime();
}

async function main() {
  assert.ok(url && url.includes('localhost'), `TACHO_URL must name localhost, got ${url}`);
  const exh = createOAuth2Client({ host: url, clientId: 'tacho-compat' });
  let userId;
  let measurement;
  let report;

  await check('OAuth2 password login returns tokens and the user id', async () => {
    const tokens = await exh.auth.authenticate({ username: email, password });
    assert.equal(typeof tokens.accessToken, 'string');
    assert.equal(typeof tokens.refreshToken, 'string');
    assert.equal(tokens.tokenType, 'bearer');
    assert.match(tokens.userId, /^[0-9a-f]{24}$/);
    userId = tokens.userId;
  });

  await check('users.me() answers the signed-in user, camelised by the SDK', async () => {
    const me = await exh.users.me();
    assert.equal(me.id, userId);
    assert.equal(me.email, email);
    assert.equal(me.language, 'EN');
    assert.equal(me.timeZone, 'Europe/Brussels');
    assert.ok(me.creationTimestamp instanceof Date && !isNaN(me.creationTimestamp));
    assert.ok(Array.isArray(me.patientEnlistments));
  });

  await check('profiles.update(rql, …) merges a partial profile', async () => {
    const rql = rqlBuilder().eq('id', userId).build();
    const result = await exh.profiles.update(rql, {
      city: 'Sint-Niklaas',
      activity: 'NOT_ACTIVE',
      comorbidities: ['HEART_FAILURE'],
      impediments: ['TREMOR'],
      serviceInfo: { app: { version: '3.5.0' }, device: { os: '17.2', type: 'ios' } },
      customFields: { wardName: 'Cardio 3B' },
    });
    assert.equal(result.affectedRecords, 1);
  });

  await check('profiles.find() with a double-encoded value finds the profile', async () => {
    // `-` is encoded twice by the SDK (`%252D`): the server decodes values once more.
    const page = await exh.profiles.find({ rql: rqlBuilder().eq('city', 'Sint-Niklaas').build() });
    assert.equal(page.data.length, 1);
    const profile = page.data[0];
    assert.equal(profile.id, userId);
    assert.equal(profile.serviceInfo.app.version, '3.5.0');
    assert.equal(profile.serviceInfo.device.type, 'ios');
    assert.deepEqual(profile.customFields, { wardName: 'Cardio 3B' });
  });

  await check('data.documents.create on measurements stores the payload verbatim', async () => {
    measurement = await exh.data.documents.create('measurements', payload);
    assert.match(measurement.id, /^[0-9a-f]{24}$/);
    assert.equal(measurement.status, 'analyzed');
    assert.equal(measurement.creatorId, userId);
    assert.deepEqual(measurement.userIds, [userId]);
    assert.equal(measurement.data.heartrate, payload.heartrate);
    assert.equal(measurement.data.measurement_timestamp, payload.measurement_timestamp);
  });

  await check('data.documents.create with the SDK\'s gzip option (large uploads)', async () => {
    const gzipped = await exh.data.documents.create('measurements', payload, { gzip: true });
    assert.equal(gzipped.status, 'analyzed');
    // The payload as sent, followed by the server's result.
    const { indicator, mostSevereLabel, af, analysis, ...sent } = gzipped.data;
    assert.deepEqual(sent, payload);
    assert.equal(indicator, 'normal');
    assert.deepEqual(mostSevereLabel, { key: 'regular', color: 'green' });
    assert.equal(af, 0);
    assert.equal(analysis.source, 'camera');
  });

  const tag = 'after coffee & tea, 2 cups';
  await check('data.documents.update changes tags and context', async () => {
    const result = await exh.data.documents.update('measurements', measurement.id, {
      tags: [tag],
      context: { symptoms: ['palpitations'], activity: 'resting', symptomSeverity: 2 },
    });
    assert.equal(result.affectedRecords, 1);
  });

  await check('data.documents.find with the RQL builder (double encoding) finds it', async () => {
    const rql = rqlBuilder().eq('data.tags', tag).sort('-id').build();
    assert.ok(rql.includes('%2526'), `the SDK double-encodes: ${rql}`);
    const page = await exh.data.documents.find('measurements', { rql });
    assert.equal(page.page.total, 1, 'only the tagged one of the two');
    assert.equal(page.data[0].id, measurement.id);
    assert.deepEqual(page.data[0].data.tags, [tag]);
    assert.equal(page.data[0].data.context.symptomSeverity, 2);
    assert.equal(typeof page.next, 'function');
    assert.equal(typeof page.previous, 'function');
    const byId = await exh.data.documents.findById('measurements', measurement.id);
    assert.equal(byId.id, measurement.id);
    measurement = byId;
  });

  await check('data.documents.create on measurement-reports renders the report', async () => {
    report = await exh.data.documents.create('measurement-reports', {
      measurementId: measurement.id,
      language: 'nl',
    });
    assert.equal(report.status, 'rendered');
    assert.equal(report.data.measurementId, measurement.id);
    assert.equal(report.data.language, 'nl');
    assert.match(report.data.readFileToken, /^[0-9a-f]{24}-[0-9a-f-]{36}$/);
  });

  await check('the latest report is found with limit(1)&sort(-id)&eq(data.measurementId,…)', async () => {
    const rql = rqlBuilder().limit(1).sort('-id').eq('data.measurementId', measurement.id).build();
    const page = await exh.data.documents.find('measurement-reports', { rql });
    assert.equal(page.data.length, 1);
    const latest = page.data[0];
    assert.equal(latest.id, report.id);
    assert.equal(latest.data.status, 'rendered', 'interface.md 2.1: data.status');
    assert.equal(latest.data.readFileToken, report.data.readFileToken);
    assert.equal(
      latest.data.forMeasurementUpdatedTimestamp,
      millis(measurement.updateTimestamp),
      'made for the measurement as it is now: not out of date',
    );
  });

  await check('the PDF downloads from the public file URL without authentication', async () => {
    const response = await fetch(`${url}/files/v1/${report.data.readFileToken}/file`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/pdf');
    const bytes = Buffer.from(await response.arrayBuffer());
    assert.equal(bytes.subarray(0, 4).toString('latin1'), '%PDF');
    const viaSdk = Buffer.from(await exh.files.retrieve(report.data.readFileToken));
    assert.ok(viaSdk.equals(bytes), 'files.retrieve gives the same bytes');
  });

  await check('SDK error classes come from the error envelope', async () => {
    await assert.rejects(
      exh.data.documents.find('measurements', { rql: '?eq(data.quadrants,1)' }),
      (error) => error instanceof InvalidRqlError,
    );
    await assert.rejects(
      exh.data.documents.update('measurements', '0123456789abcdef01234567', { tags: [] }),
      (error) => error instanceof ResourceUnknownError,
    );
  });

  await check('the refresh grant rotates the tokens and the SDK keeps working', async () => {
    const first = await exh.auth.authenticate({ username: email, password });
    const second = await exh.auth.authenticate({ refreshToken: first.refreshToken });
    assert.notEqual(second.refreshToken, first.refreshToken);
    assert.equal(second.userId, userId);
    const me = await exh.users.me();
    assert.equal(me.id, userId);
  });

  console.log(`PASS (${step} steps)`);
}

main().catch((error) => {
  console.log(error && error.stack ? error.stack : error);
  console.log('FAIL');
  process.exit(1);
});
