"""asyncpg (Debian python3-asyncpg): every statement is prepared with untyped parameters, so the
server infers their types (the radius of a comparison becomes hamming_distance, which asyncpg
encodes as its base type int4; hamming_within's radius int4; the fingerprint int8), and asyncpg
converts the Python value to that type: a Decimal or float radius goes through int(), which
truncates a fractional one."""
import asyncio
import decimal
import unittest

import asyncpg

from clientcase import BIG, FORMS, ClientChecks, Driver, expected_ids


class Asyncpg(Driver):
    error = asyncpg.PostgresError

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.conn = self.run(asyncpg.connect())

    def run(self, coroutine):
        return self.loop.run_until_complete(coroutine)

    def execute(self, sql):
        self.run(self.conn.execute(sql))

    def fetch(self, sql, params=()):
        return [tuple(row) for row in self.run(self.conn.fetch(sql, *params))]

    def parameter_types(self, sql):
        statement = self.run(self.conn.prepare(sql))
        return [t.name for t in statement.get_parameters()]

    def sqlstate_of(self, e):
        return e.sqlstate

    def close(self):
        self.run(self.conn.close())
        self.loop.close()


class AsyncpgTest(ClientChecks, unittest.TestCase):
    schema = 'clients_asyncpg'
    make_driver = Asyncpg

    def test_server_infers_the_parameter_types(self):
        for form, types in (('hamming <= r', ['int8', 'int4']), ('r >= hamming', ['int8', 'int4']),
                            ('hamming_within', ['int8', 'int4'])):
            with self.subTest(form=form):
                self.assertEqual(self.db.parameter_types(FORMS[form][0]), types)
        # On the server the comparison's radius is the domain itself.
        self.assertIn((['bigint', 'hamming_distance'],),
                      self.db.fetch('SELECT parameter_types::text[] FROM pg_prepared_statements '
                                    'WHERE strpos(statement, $1) > 0', ('hamming(fp, $1) <= $2',)))

    def test_decimal_radius_is_truncated_to_int4(self):
        # Decimal('3') is radius 3, indexed as an int.
        self.check_query('hamming <= r', BIG, decimal.Decimal('3'))
        # Decimal('3.7') is int(3.7) = 3: "< 3.7" selects distances up to 2, where numeric's
        # comparison (psql, psycopg, JDBC setBigDecimal) selects up to 3.
        self.check_query('hamming < r', BIG, decimal.Decimal('3.7'), expect=expected_ids('hamming < r', BIG, 3))
        self.check_query('hamming < r', BIG, 3.7, expect=expected_ids('hamming < r', BIG, 3))

    def test_radius_beyond_int4_is_refused_by_the_driver(self):
        with self.assertRaisesRegex(asyncpg.DataError, 'invalid input for query argument .* out of int32 range'):
            self.db.fetch(FORMS['hamming <= r'][0], (BIG, 2**40))


if __name__ == '__main__':
    unittest.main()
