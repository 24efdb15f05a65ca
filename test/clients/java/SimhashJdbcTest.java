// PgJDBC (Debian libpostgresql-jdbc-java) against the simhash extension, run as a single-file
// program: java -cp /usr/share/java/postgresql.jar SimhashJdbcTest.java
// PgJDBC types each parameter by its setter: setShort int2, setInt and setObject(Integer) int4,
// setLong and setObject(Long) int8, setBigDecimal numeric, setString varchar (unless the
// connection says stringtype=unspecified). It needs TCP: it connects to 127.0.0.1 (or PGHOST when
// that is a host name) on PGPORT, as PGUSER, to PGDATABASE.
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class SimhashJdbcTest {
    static final String SCHEMA = "clients_jdbc";
    static final long BIG = -7046029254386353131L; // needs int8; row 100000 + d is d bits away
    static final int SMALL = 1000;                 // fits int2; row 200000 + d is d bits away
    static final int PLANTED = 13;                 // d = 0..12 (setup.sql)
    static final String INDEX = "docs_fp_idx";
    static final String TEXT_A = "PostgreSQL is a powerful, open source object-relational database system with over 35 "
        + "years of active development that has earned it a strong reputation for reliability, "
        + "feature robustness, and performance.";
    static final String TEXT_B = TEXT_A.replace("strong", "solid").replace("performance", "speed");

    record Form(String sql, BiPredicate<Integer, BigDecimal> selects) {}
    static final Map<String, Form> FORMS = new LinkedHashMap<>();
    static {
        FORMS.put("hamming <= r", new Form("SELECT id FROM docs WHERE hamming(fp, $1) <= $2 ORDER BY id", (d, r) -> BigDecimal.valueOf(d).compareTo(r) <= 0));
        FORMS.put("hamming < r", new Form("SELECT id FROM docs WHERE hamming(fp, $1) < $2 ORDER BY id", (d, r) -> BigDecimal.valueOf(d).compareTo(r) < 0));
        FORMS.put("r >= hamming", new Form("SELECT id FROM docs WHERE $2 >= hamming(fp, $1) ORDER BY id", (d, r) -> BigDecimal.valueOf(d).compareTo(r) <= 0));
        FORMS.put("r > hamming", new Form("SELECT id FROM docs WHERE $2 > hamming(fp, $1) ORDER BY id", (d, r) -> BigDecimal.valueOf(d).compareTo(r) < 0));
        FORMS.put("hamming(q, fp) <= r", new Form("SELECT id FROM docs WHERE hamming($1, fp) <= $2 ORDER BY id", (d, r) -> BigDecimal.valueOf(d).compareTo(r) <= 0));
        FORMS.put("hamming_within", new Form("SELECT id FROM docs WHERE hamming_within(fp, $1, $2) ORDER BY id", (d, r) -> BigDecimal.valueOf(d).compareTo(r) <= 0));
    }

    /** A parameter as one PgJDBC setter binds it; value is what it means as a number. */
    interface Setter { void bind(PreparedStatement ps, int index) throws SQLException; }
    record Param(String name, Object value, Setter setter) {
        public String toString() { return name; }
    }
    static Param setShort(int v) { return new Param("setShort(" + v + ")", v, (ps, i) -> ps.setShort(i, (short) v)); }
    static Param setInt(int v) { return new Param("setInt(" + v + ")", v, (ps, i) -> ps.setInt(i, v)); }
    static Param setLong(long v) { return new Param("setLong(" + v + "L)", v, (ps, i) -> ps.setLong(i, v)); }
    static Param setObject(Object v) {
        return new Param("setObject(" + v.getClass().getSimpleName() + " " + v + ")", v, (ps, i) -> ps.setObject(i, v));
    }
    static Param setBigDecimal(String v) {
        return new Param("setBigDecimal(" + v + ")", new BigDecimal(v), (ps, i) -> ps.setBigDecimal(i, new BigDecimal(v)));
    }
    static Param setString(String v) { return new Param("setString(\"" + v + "\")", v, (ps, i) -> ps.setString(i, v)); }
    static Param setArray(Array v) { return new Param("setArray", v, (ps, i) -> ps.setArray(i, v)); }

    static Connection conn;

    static void check(boolean ok, String what) {
        if (!ok) throw new AssertionError(what);
    }

    static void checkEqual(Object got, Object expected, String what) {
        if (!Objects.deepEquals(got, expected))
            throw new AssertionError(what + ": got " + deepString(got) + ", expected " + deepString(expected));
    }

    static String deepString(Object o) {
        return o instanceof Object[] a ? Arrays.deepToString(a) : String.valueOf(o);
    }

    /** $n placeholders become ?, each bound with the n-th parameter. */
    static PreparedStatement prepare(String sql, Param... params) throws SQLException {
        Matcher m = Pattern.compile("\\$(\\d+)").matcher(sql);
        List<Param> order = new ArrayList<>();
        while (m.find()) order.add(params[Integer.parseInt(m.group(1)) - 1]);
        PreparedStatement ps = conn.prepareStatement(m.replaceAll("?"));
        for (int i = 0; i < order.size(); i++) order.get(i).setter().bind(ps, i + 1);
        return ps;
    }

    static List<List<Object>> rows(String sql, Param... params) throws SQLException {
        try (PreparedStatement ps = prepare(sql, params); ResultSet rs = ps.executeQuery()) {
            List<List<Object>> rows = new ArrayList<>();
            int columns = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<Object> row = new ArrayList<>();
                for (int c = 1; c <= columns; c++) row.add(rs.getObject(c));
                rows.add(row);
            }
            return rows;
        }
    }

    static Object scalar(String sql, Param... params) throws SQLException {
        return rows(sql, params).get(0).get(0);
    }

    static void execute(String sql) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.execute(sql);
        }
    }

    static String sqlstate(String sql, Param... params) {
        try {
            rows(sql, params);
            return null;
        } catch (SQLException e) {
            return e.getSQLState();
        }
    }

    static List<Object> ids(List<List<Object>> rows) {
        List<Object> ids = new ArrayList<>();
        for (List<Object> row : rows) ids.add(row.get(0));
        return ids;
    }

    static List<Object> expectedIds(String form, long queryFp, BigDecimal radius) {
        List<Object> ids = new ArrayList<>();
        for (int d = 0; d < PLANTED; d++)
            if (FORMS.get(form).selects().test(d, radius)) ids.add((queryFp == BIG ? 100000 : 200000) + d);
        return ids;
    }

    static BigDecimal number(Param p) {
        return p.value() instanceof BigDecimal b ? b : new BigDecimal(p.value().toString());
    }

    record Counted(List<List<Object>> rows, long scans) {}

    /** The statement's rows and how many scans of the simhash index it made (the backend's counter
     *  for the transaction, which nothing flushes inside a transaction block). */
    static Counted counted(String sql, Param... params) throws SQLException {
        String scans = "SELECT pg_stat_get_xact_numscans('docs_fp_idx'::regclass)";
        conn.setAutoCommit(false);
        try {
            long before = (Long) scalar(scans);
            List<List<Object>> rows = rows(sql, params);
            return new Counted(rows, (Long) scalar(scans) - before);
        } finally {
            conn.commit();
            conn.setAutoCommit(true);
        }
    }

    static List<Object> sequentialIds(String sql, Param... params) throws SQLException {
        execute("SET enable_indexscan = off; SET enable_bitmapscan = off");
        try {
            // A statement text of its own, not a server-prepared one planned with the index.
            Counted c = counted("/* sequential */ " + sql, params);
            checkEqual(c.scans(), 0L, "index scans of the sequential run");
            return ids(c.rows());
        } finally {
            execute("RESET enable_indexscan; RESET enable_bitmapscan");
        }
    }

    /** EXPLAIN names the index (or not), the executed statement scans it (or not), and it returns
     *  the planted rows within the radius, as a sequential scan does. */
    static void checkQuery(String form, Param fp, Param radius, boolean indexed) throws SQLException {
        String sql = FORMS.get(form).sql();
        String where = form + " with " + fp + ", " + radius;
        StringBuilder plan = new StringBuilder();
        for (List<Object> row : rows("EXPLAIN (COSTS OFF) " + sql, fp, radius)) plan.append(row.get(0)).append('\n');
        checkEqual(plan.toString().contains(INDEX), indexed, where + ": index in the plan\n" + plan);
        Counted c = counted(sql, fp, radius);
        checkEqual(c.scans() > 0, indexed, where + ": index scanned");
        List<Object> ids = ids(c.rows());
        checkEqual(ids, expectedIds(form, ((Number) fp.value()).longValue(), number(radius)), where);
        checkEqual(ids, sequentialIds(sql, fp, radius), where + " vs a sequential scan");
    }

    // ---- the checks ----

    static void setterTypes() throws SQLException {
        Param[] params = {setShort(3), setInt(3), setLong(3), setObject(3), setObject(3L), setBigDecimal("3"), setString("3")};
        String[] types = {"smallint", "integer", "bigint", "integer", "bigint", "numeric", "character varying"};
        for (int i = 0; i < params.length; i++)
            checkEqual(scalar("SELECT pg_typeof($1)::text", params[i]), types[i], params[i].toString());
    }

    static void integerRadiiUseTheIndex() throws SQLException {
        Param[] fingerprints = {setLong(BIG), setObject(BIG), setInt(SMALL), setShort(SMALL)};
        for (String form : FORMS.keySet())
            for (Param fp : fingerprints)
                for (int r : new int[] {0, 3, 7})
                    for (Param radius : new Param[] {setShort(r), setInt(r), setObject(r), setLong(r), setObject((long) r)}) {
                        // hamming_within(bigint, bigint, integer): an int8 radius does not fit it.
                        if (form.equals("hamming_within") && radius.value() instanceof Long) continue;
                        checkQuery(form, fp, radius, true);
                    }
    }

    static void longRadiusDoesNotFitHammingWithin() {
        for (Param radius : new Param[] {setLong(3), setObject(3L)})
            checkEqual(sqlstate(FORMS.get("hamming_within").sql(), setLong(BIG), radius), "42883", "hamming_within with " + radius);
    }

    static void genericPlansUseTheIndex() throws SQLException {
        execute("SET plan_cache_mode = force_generic_plan");
        try {
            for (String form : FORMS.keySet())
                for (boolean asLong : new boolean[] {false, true}) {
                    if (form.equals("hamming_within") && asLong) continue;
                    for (int r : new int[] {3, 5, 0, 7, 3, 1, 2}) { // past prepareThreshold (5): server-prepared
                        Param radius = asLong ? setLong(r) : setInt(r);
                        Counted c = counted(FORMS.get(form).sql(), setLong(BIG), radius);
                        check(c.scans() > 0, form + " with " + radius + ": no index scan");
                        checkEqual(ids(c.rows()), expectedIds(form, BIG, BigDecimal.valueOf(r)), form + " with " + radius);
                    }
                }
        } finally {
            execute("RESET plan_cache_mode");
        }
    }

    static void bigDecimalRadiusIsExactWithoutTheIndex() throws SQLException {
        for (String form : new String[] {"hamming <= r", "hamming < r", "r >= hamming", "r > hamming", "hamming(q, fp) <= r"})
            for (String r : new String[] {"3", "3.5"})
                checkQuery(form, setLong(BIG), setBigDecimal(r), false);
        checkEqual(sqlstate(FORMS.get("hamming_within").sql(), setLong(BIG), setBigDecimal("3")), "42883", "hamming_within with setBigDecimal");
    }

    static void stringRadius() throws Exception {
        // setString binds varchar: no operator compares hamming_distance with it.
        checkEqual(sqlstate(FORMS.get("hamming <= r").sql(), setLong(BIG), setString("3")), "42883", "setString radius");
        // stringtype=unspecified sends strings untyped: the server reads the radius as hamming_distance.
        Connection saved = conn;
        conn = DriverManager.getConnection(url() + "&stringtype=unspecified");
        try {
            useSchema();
            for (String form : FORMS.keySet()) checkQuery(form, setLong(BIG), setString("3"), true);
        } finally {
            conn.close();
            conn = saved;
        }
    }

    static void simhashRoundTrip() throws SQLException {
        long fp = (Long) scalar("SELECT simhash($1)", setString(TEXT_A));
        checkEqual(scalar("SELECT hamming($1, simhash($2))", setLong(fp), setString(TEXT_A)), 0, "distance to itself");
    }

    static void minhashRoundTrip() throws SQLException {
        Integer[] a = signature(TEXT_A), b = signature(TEXT_B);
        Array arrayA = conn.createArrayOf("integer", a), arrayB = conn.createArrayOf("integer", b);
        checkEqual(scalar("SELECT minhash($1) = $2", setString(TEXT_A), setArray(arrayA)), true, "signature bound back");
        Object viaClient = scalar("SELECT minhash_jaccard($1, $2)", setArray(arrayA), setArray(arrayB));
        Object onServer = scalar("SELECT minhash_jaccard(minhash($1), minhash($2))", setString(TEXT_A), setString(TEXT_B));
        checkEqual(viaClient, onServer, "minhash_jaccard of round-tripped signatures");
        int equal = 0;
        for (int i = 0; i < a.length; i++) if (a[i].equals(b[i])) equal++;
        checkEqual(viaClient, equal / 128.0, "fraction of equal slots");
        check((Double) viaClient > 0 && (Double) viaClient < 1, "jaccard strictly between 0 and 1");
    }

    static Integer[] signature(String text) throws SQLException {
        Array sig = (Array) scalar("SELECT minhash($1)", setString(text));
        checkEqual(sig.getBaseTypeName(), "int4", "signature element type");
        Integer[] values = (Integer[]) sig.getArray();
        checkEqual(values.length, 128, "signature slots");
        return values;
    }

    static void simhashPairs() throws SQLException {
        List<List<Object>> expected = new ArrayList<>();
        for (long base : new long[] {100000, 200000})
            for (int i = 0; i < PLANTED; i++)
                for (int j = i + 1; j < PLANTED && j - i <= 3; j++)
                    expected.add(List.of(base + i, base + j, j - i));
        String sql = "SELECT id_a, id_b, distance FROM simhash_pairs($1, $2) ORDER BY id_a, id_b";
        Param query = setString("SELECT id, fp FROM " + SCHEMA + ".docs");
        checkEqual(rows(sql, query, setInt(3)), expected, "simhash_pairs with setInt");
        // simhash_pairs(text, integer, text): an int8 radius does not fit it.
        checkEqual(sqlstate(sql, query, setLong(3)), "42883", "simhash_pairs with setLong");
    }

    static void errorsCarryTheirSqlstate() throws SQLException {
        checkEqual(sqlstate("SELECT simhash($1, $2)", setString("x"), setString("nope")), "22023", "unknown unit");
        checkEqual(sqlstate("SELECT * FROM simhash_pairs($1, $2)", setString("SELECT 1"), setInt(3)), "42804", "query of the wrong shape");
        checkEqual(sqlstate("SELECT * FROM simhash_pairs($1, $2)", setString("SELECT id, fp FROM " + SCHEMA + ".docs"), setInt(65)), "22023", "radius 65");
        checkEqual(sqlstate("SELECT minhash_jaccard($1, $2)", setArray(conn.createArrayOf("integer", new Integer[] {1, 2})),
                            setArray(conn.createArrayOf("integer", new Integer[] {1, 2, 3}))), "22023", "signatures of other slots");
        checkEqual(scalar("SELECT 1"), 1, "the connection goes on");
    }

    // ---- running them ----

    static void useSchema() throws SQLException {
        execute("SELECT set_config('search_path', '" + SCHEMA + ", ' || current_setting('search_path'), false)");
    }

    interface Check { void run() throws Exception; }

    static String url() {
        String host = System.getenv().getOrDefault("PGHOST", "");
        if (host.isEmpty() || host.startsWith("/")) host = "127.0.0.1"; // a socket directory: TCP on loopback
        return "jdbc:postgresql://" + host + ":" + System.getenv().getOrDefault("PGPORT", "5432") + "/"
            + System.getenv().getOrDefault("PGDATABASE", "postgres") + "?user="
            + System.getenv().getOrDefault("PGUSER", System.getProperty("user.name"));
    }

    public static void main(String[] args) throws Exception {
        Map<String, Check> checks = new LinkedHashMap<>();
        checks.put("setters bind these types", SimhashJdbcTest::setterTypes);
        checks.put("integer radii of every setter use the index", SimhashJdbcTest::integerRadiiUseTheIndex);
        checks.put("a long radius does not fit hamming_within", SimhashJdbcTest::longRadiusDoesNotFitHammingWithin);
        checks.put("generic plans use the index", SimhashJdbcTest::genericPlansUseTheIndex);
        checks.put("a BigDecimal radius is exact without the index", SimhashJdbcTest::bigDecimalRadiusIsExactWithoutTheIndex);
        checks.put("a string radius", SimhashJdbcTest::stringRadius);
        checks.put("simhash() round trip", SimhashJdbcTest::simhashRoundTrip);
        checks.put("minhash() round trip", SimhashJdbcTest::minhashRoundTrip);
        checks.put("simhash_pairs() rows", SimhashJdbcTest::simhashPairs);
        checks.put("errors carry their SQLSTATE", SimhashJdbcTest::errorsCarryTheirSqlstate);

        conn = DriverManager.getConnection(url());
        System.out.println("PgJDBC " + conn.getMetaData().getDriverVersion() + " at " + url());
        execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE; CREATE SCHEMA " + SCHEMA);
        useSchema();
        execute(Files.readString(Path.of(System.getProperty("setup.sql", "../setup.sql"))));
        int passed = 0, failed = 0;
        for (Map.Entry<String, Check> check : checks.entrySet()) {
            try {
                check.getValue().run();
                passed++;
                System.out.println("ok - " + check.getKey());
            } catch (Throwable e) {
                failed++;
                System.out.println("not ok - " + check.getKey() + ": " + e);
                e.printStackTrace(System.out);
            }
        }
        execute("DROP SCHEMA " + SCHEMA + " CASCADE");
        conn.close();
        System.out.println("jdbc: " + passed + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }
}
