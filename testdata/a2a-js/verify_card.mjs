// Checks a signed agent card without wunder's Go code, run by
// cmd/wunder/card_signing_test.go:
//   node verify_card.mjs <card-url> <jwks-url> <independent|sdk>
// independent: JCS written here (keys sorted by UTF-16 code units, which
//   is JavaScript's sort; JSON.stringify's ES6 numbers and escapes), default
//   values removed as A2A 1.0 section 8.4.1 and the SDKs do, and the JWS
//   checked with node:crypto against the key of the served JWKS; the
//   @a2a-js/sdk resolver must still parse the signed card.
// sdk: the @a2a-js/sdk 1.3.0 verifier (verifyAgentCardSignature), which
//   reads the card through the 1.0 schema first.
// Both modes check that a changed card is refused. Prints one line per
// check; exits non-zero on the first failure.
import { createPublicKey, verify } from 'node:crypto';
import { verifyAgentCardSignature } from '@a2a-js/sdk';
import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';

const [cardURL, jwksURL, mode] = process.argv.slice(2);
const fail = (msg) => { console.error(`FAIL [${mode}] ${msg}`); process.exit(1); };
const ok = (msg) => console.log(`ok [${mode}] ${msg}`);

const get = async (url) => {
  const r = await fetch(url, { headers: { 'A2A-Version': '1.0' } });
  if (r.status !== 200) fail(`GET ${url}: HTTP ${r.status}`);
  return r.json();
};
const card = await get(cardURL);
const jwks = await get(jwksURL);
if (!Array.isArray(card.signatures) || card.signatures.length === 0) fail(`no signatures: ${JSON.stringify(card)}`);
const keyOf = (kid) => {
  const jwk = (jwks.keys ?? []).find((k) => k.kid === kid);
  if (!jwk) fail(`kid ${kid} not in the JWKS ${JSON.stringify(jwks)}`);
  return createPublicKey({ key: jwk, format: 'jwk' });
};
const changed = { ...card, name: `${card.name} (changed)` };

if (mode === 'independent') {
  const clean = (v) => {
    if (v === null || v === '') return undefined;
    if (Array.isArray(v)) {
      const out = v.map(clean).filter((e) => e !== undefined);
      return out.length ? out : undefined;
    }
    if (typeof v === 'object') {
      const out = {};
      for (const [k, e] of Object.entries(v)) {
        const c = clean(e);
        if (c !== undefined) out[k] = c;
      }
      return Object.keys(out).length ? out : undefined;
    }
    return v;
  };
  const jcs = (v) => {
    if (v === null || typeof v !== 'object') return JSON.stringify(v);
    if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${jcs(v[k])}`).join(',')}}`;
  };
  const check = (c, s) => {
    const { signatures, ...rest } = c;
    const payload = Buffer.from(jcs(clean(rest) ?? {})).toString('base64url');
    const hdr = JSON.parse(Buffer.from(s.protected, 'base64url').toString());
    const input = Buffer.from(`${s.protected}.${payload}`);
    const sig = Buffer.from(s.signature, 'base64url');
    const key = keyOf(hdr.kid);
    if (hdr.alg === 'EdDSA') return [hdr, verify(null, input, key, sig)];
    const hash = { ES256: 'sha256', ES384: 'sha384' }[hdr.alg];
    if (!hash) fail(`alg ${hdr.alg}`);
    return [hdr, verify(hash, input, { key, dsaEncoding: 'ieee-p1363' }, sig)];
  };
  for (const s of card.signatures) {
    const [hdr, good] = check(card, s);
    if (!hdr.alg || !hdr.kid || hdr.typ !== 'JOSE') fail(`protected header ${JSON.stringify(hdr)}`);
    if (!good) fail(`signature ${JSON.stringify(hdr)} does not verify`);
    ok(`signature ${hdr.alg} kid ${hdr.kid} verifies`);
    if (check(changed, s)[1]) fail('a changed card verifies');
    ok('a changed card does not verify');
  }
  const resolved = await new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }).resolve(cardURL.replace(/\/\.well-known\/agent-card\.json$/, ''));
  if (resolved.signatures?.length !== card.signatures.length || resolved.signatures[0].protected !== card.signatures[0].protected) {
    fail(`the SDK resolver read signatures ${JSON.stringify(resolved.signatures)}`);
  }
  ok('the @a2a-js/sdk resolver parses the signed card');
} else if (mode === 'sdk') {
  const verifier = verifyAgentCardSignature(async (kid) => keyOf(kid));
  try {
    await verifier(card);
  } catch (e) {
    fail(`verifyAgentCardSignature: ${e}`);
  }
  ok('verifyAgentCardSignature accepts the card');
  console.debug = () => {}; // the SDK logs each failing entry; the next failure is expected
  let refused = false;
  try {
    await verifier(changed);
  } catch {
    refused = true;
  }
  if (!refused) fail('verifyAgentCardSignature accepts a changed card');
  ok('verifyAgentCardSignature refuses a changed card');
} else {
  fail(`mode ${mode}: want independent or sdk`);
}
