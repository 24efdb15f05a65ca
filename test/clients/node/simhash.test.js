// node-postgres (npm pg) against the simhash extension. node-postgres sends every parameter as
// text with no type (a JS number 3 is '3', a BigInt its digits, an array an array literal), so
// the server infers the types: the radius of a comparison becomes hamming_distance (the domain
// over integer), hamming_within's radius integer, a fingerprint bigint, a signature integer[].
// bigint results come back as strings. Connects through PGHOST, PGPORT, PGUSER, PGDATABASE.
'use strict'

const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { Client } = require('pg')

const SCHEMA = 'clients_node_postgres'
const SETUP_SQL = fs.readFileSync(path.join(__dirname, '..', 'setup.sql'), 'utf8')
const BIG = -7046029254386353131n // needs int8 (and more than a JS number's 53 bits)
const SMALL = 1000
const CLUSTER = new Map([[BIG, 100000], [SMALL, 200000]]) // row base + d is d bits away, d = 0..12
const PLANTED = [...Array(13).keys()]
const INDEX = 'docs_fp_idx'
const FORMS = {
  'hamming <= r': ['SELECT id FROM docs WHERE hamming(fp, $1) <= $2 ORDER BY id', (d, r) => d <= r],
  'hamming < r': ['SELECT id FROM docs WHERE hamming(fp, $1) < $2 ORDER BY id', (d, r) => d < r],
  'r >= hamming': ['SELECT id FROM docs WHERE $2 >= hamming(fp, $1) ORDER BY id', (d, r) => d <= r],
  'r > hamming': ['SELECT id FROM docs WHERE $2 > hamming(fp, $1) ORDER BY id', (d, r) => d < r],
  'hamming(q, fp) <= r': ['SELECT id FROM docs WHERE hamming($1, fp) <= $2 ORDER BY id', (d, r) => d <= r],
  'hamming_within': ['SELECT id FROM docs WHERE hamming_within(fp, $1, $2) ORDER BY id', (d, r) => d <= r]
}
const TEXT_A =
  'PostgreSQL is a powerful, open source object-relational database system with over 35 ' +
  'years of active development that has earned it a strong reputation for reliability, ' +
  'feature robustness, and performance.'
const TEXT_B = TEXT_A.replace('strong', 'solid').replace('performance', 'speed')

const client = new Client()
let statements = 0 // names for prepared statements

const expectedIds = (form, queryFp, radius) =>
  PLANTED.filter((d) => FORMS[form][1](d, Number(radius))).map((d) => CLUSTER.get(queryFp) + d)

async function scalar(sql, values = []) {
  const res = await client.query({ text: sql, values, rowMode: 'array' })
  return res.rows[0][0]
}

async function plan(sql, values) {
  const res = await client.query({ text: 'EXPLAIN (COSTS OFF) ' + sql, values, rowMode: 'array' })
  return res.rows.map((row) => row[0]).join('\n')
}

// The statement's rows and how many scans of the simhash index it made (the backend's counter for
// the transaction, which nothing flushes inside a transaction block).
async function counted(query) {
  const scans = "SELECT pg_stat_get_xact_numscans('docs_fp_idx'::regclass)"
  await client.query('BEGIN')
  try {
    const before = Number(await scalar(scans))
    const res = await client.query(query)
    return { rows: res.rows, scans: Number(await scalar(scans)) - before }
  } finally {
    await client.query('COMMIT')
  }
}

async function sequentialIds(sql, values) {
  await client.query('SET enable_indexscan = off; SET enable_bitmapscan = off')
  try {
    // A statement text of its own, not a prepared one planned with the index.
    const { rows, scans } = await counted({ text: '/* sequential */ ' + sql, values })
    assert.equal(scans, 0, 'the sequential run scanned the index')
    return rows.map((row) => row.id)
  } finally {
    await client.query('RESET enable_indexscan; RESET enable_bitmapscan')
  }
}

// EXPLAIN names the index (or not), the executed statement scans it (or not), and it returns the
// planted rows within the radius (or `expect`), as a sequential scan does. `name` prepares it.
async function checkQuery(form, queryFp, radius, { indexed = true, expect, name } = {}) {
  const sql = FORMS[form][0]
  const values = [queryFp, radius]
  const where = `${sql} with (${queryFp}, ${radius})`
  const explained = await plan(sql, values)
  assert.equal(explained.includes(INDEX), indexed, `${where}:\n${explained}`)
  const { rows, scans } = await counted({ text: sql, values, name })
  assert.equal(scans > 0, indexed, `${where}: ${scans} index scans`)
  const ids = rows.map((row) => row.id)
  assert.deepEqual(ids, expect ?? expectedIds(form, queryFp, radius), where)
  assert.deepEqual(ids, await sequentialIds(sql, values), `${where} vs a sequential scan`)
}

async function sqlstate(sql, values) {
  try {
    await client.query(sql, values)
  } catch (e) {
    return e.code
  }
  return null
}

before(async () => {
  await client.connect()
  await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE; CREATE SCHEMA ${SCHEMA}`)
  await client.query(`SELECT set_config('search_path', '${SCHEMA}, ' || current_setting('search_path'), false)`)
  await client.query(SETUP_SQL)
})

after(async () => {
  await client.query(`DROP SCHEMA ${SCHEMA} CASCADE`)
  await client.end()
})

test('parameters are sent untyped', async () => {
  // A parameter nothing gives a type to: the server cannot tell what a number 3 is.
  assert.equal(await sqlstate('SELECT pg_typeof($1)', [3]), '42P18')
})

test('the query forms use the index (numbers and BigInts as they are)', async (t) => {
  for (const form of Object.keys(FORMS)) {
    for (const queryFp of CLUSTER.keys()) {
      for (const radius of [0, 3, 7]) {
        await t.test(`${form}, ${queryFp}, ${radius}`, () => checkQuery(form, queryFp, radius))
      }
    }
  }
})

test('a radius and fingerprint given as strings are the same', async () => {
  for (const form of Object.keys(FORMS)) {
    await checkQuery(form, BIG.toString(), '3', { expect: expectedIds(form, BIG, 3) })
  }
})

test('named prepared statements use the index, in custom and generic plans', async () => {
  for (const form of Object.keys(FORMS)) {
    await checkQuery(form, BIG, 3, { name: `s${statements++}` })
  }
  const types = await client.query({
    text: 'SELECT parameter_types::text[] FROM pg_prepared_statements WHERE strpos(statement, $1) > 0',
    values: ['hamming(fp, $1) <= $2'],
    rowMode: 'array'
  })
  assert.deepEqual(types.rows[0][0], ['bigint', 'hamming_distance'])

  await client.query('SET plan_cache_mode = force_generic_plan')
  try {
    for (const form of Object.keys(FORMS)) {
      const name = `s${statements++}`
      for (const radius of [3, 5, 0, 7, 3, 1, 2]) {
        const { rows, scans } = await counted({ name, text: FORMS[form][0], values: [BIG, radius] })
        assert.ok(scans > 0, `${form}, radius ${radius}: no index scan`)
        assert.deepEqual(rows.map((row) => row.id), expectedIds(form, BIG, radius))
      }
    }
  } finally {
    await client.query('RESET plan_cache_mode')
  }
})

test('a fractional radius is refused: the server reads it as an integer', async () => {
  for (const form of Object.keys(FORMS)) {
    assert.equal(await sqlstate(FORMS[form][0], [BIG, 3.5]), '22P02', form)
  }
})

test('a fingerprint as a JS number loses its low bits', async () => {
  // Number(BIG) is rounded to 53 significant bits: another fingerprint. Use BigInt or strings.
  assert.equal(await scalar('SELECT $1::bigint = $2::bigint', [Number(BIG), BIG]), false)
  assert.equal(await scalar('SELECT $1::bigint = $2::bigint', [BIG.toString(), BIG]), true)
})

test('simhash() comes back as a string and binds back unchanged', async () => {
  const fp = await scalar('SELECT simhash($1)', [TEXT_A])
  assert.equal(typeof fp, 'string')
  assert.equal(await scalar('SELECT hamming($1, simhash($2))', [fp, TEXT_A]), 0)
  assert.equal(await scalar('SELECT hamming($1, simhash($2))', [BigInt(fp), TEXT_A]), 0)
})

test('minhash() signatures round-trip as arrays of numbers', async () => {
  const sigA = await scalar('SELECT minhash($1)', [TEXT_A])
  const sigB = await scalar('SELECT minhash($1)', [TEXT_B])
  for (const sig of [sigA, sigB]) {
    assert.ok(Array.isArray(sig))
    assert.equal(sig.length, 128)
    assert.ok(sig.every((v) => Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31))
  }
  assert.equal(await scalar('SELECT minhash($1) = $2', [TEXT_A, sigA]), true)
  const viaClient = await scalar('SELECT minhash_jaccard($1, $2)', [sigA, sigB])
  const onServer = await scalar('SELECT minhash_jaccard(minhash($1), minhash($2))', [TEXT_A, TEXT_B])
  assert.equal(viaClient, onServer)
  assert.equal(viaClient, sigA.filter((v, i) => v === sigB[i]).length / 128)
  assert.ok(viaClient > 0 && viaClient < 1)
})

test('simhash_pairs() rows', async () => {
  const res = await client.query({
    text: 'SELECT id_a, id_b, distance FROM simhash_pairs($1, $2) ORDER BY id_a, id_b',
    values: [`SELECT id, fp FROM ${SCHEMA}.docs`, 3],
    rowMode: 'array'
  })
  const expected = []
  for (const base of [100000, 200000]) {
    for (const i of PLANTED) {
      for (const j of PLANTED) {
        if (i < j && j - i <= 3) expected.push([String(base + i), String(base + j), j - i])
      }
    }
  }
  assert.deepEqual(res.rows, expected) // bigint ids as strings, the distance a number
})

test('errors carry their SQLSTATE', async () => {
  assert.equal(await sqlstate('SELECT simhash($1, $2)', ['x', 'nope']), '22023')
  assert.equal(await sqlstate('SELECT * FROM simhash_pairs($1, $2)', ['SELECT 1', 3]), '42804')
  assert.equal(await sqlstate('SELECT * FROM simhash_pairs($1, $2)', [`SELECT id, fp FROM ${SCHEMA}.docs`, 65]), '22023')
  assert.equal(await sqlstate('SELECT minhash_jaccard($1, $2)', [[1, 2], [1, 2, 3]]), '22023')
  assert.equal(await scalar('SELECT 1'), 1)
})
