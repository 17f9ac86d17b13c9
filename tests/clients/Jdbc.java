// pgjdbc against a server: typed parameters and results, through the driver's unnamed
// statements first and then, from the fifth run, its named server-side statements with
// binary results; a batch; generated keys; a rolled-back transaction; an error's SQLSTATE;
// the catalog queries behind DatabaseMetaData and a type lookup; a result read with a
// fetch size. Usage (single-file
// source): java -cp postgresql.jar Jdbc.java PORT. Passes against PostgreSQL 15 and Myriad
// alike (crates/server/tests/clients.rs).
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.Date;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.util.Arrays;
import java.util.UUID;

public class Jdbc {
    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    static void equal(Object got, Object want, String what) {
        if (!java.util.Objects.equals(got, want)) {
            throw new AssertionError(what + ": got " + got + ", want " + want);
        }
    }

    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://127.0.0.1:" + args[0] + "/postgres";
        try (Connection c = DriverManager.getConnection(url, "postgres", "")) {
            run(c);
        }
        System.out.println("ok");
    }

    static void run(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS jd_t");
            st.execute("CREATE TABLE jd_t (id serial PRIMARY KEY, i2 smallint, i4 int, i8 bigint,"
                    + " f4 real, f8 double precision, n numeric(12,3), b boolean, t text,"
                    + " v varchar(10), d date, ts timestamp, tz timestamptz, u uuid, by bytea)");
        }
        UUID u = UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
        byte[] by = {0, (byte) 255, 98, 92};
        Timestamp ts = Timestamp.valueOf("2024-01-02 03:04:05.678");
        Timestamp tz = Timestamp.from(Instant.parse("2024-01-02T03:04:05.678901Z"));
        String ins = "INSERT INTO jd_t (i2, i4, i8, f4, f8, n, b, t, v, d, ts, tz, u, by)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        // Seven runs of one PreparedStatement: pgjdbc switches to a named server-side
        // statement at the fifth (prepareThreshold) and asks for binary results after it.
        try (PreparedStatement p = c.prepareStatement(ins, Statement.RETURN_GENERATED_KEYS)) {
            for (int i = 1; i <= 7; i++) {
                p.setShort(1, (short) -i);
                p.setInt(2, 40 + i);
                p.setLong(3, 9007199254740993L * i);
                p.setFloat(4, 1.5f * i);
                p.setDouble(5, 2.25 * i);
                p.setBigDecimal(6, new BigDecimal("12.345").multiply(BigDecimal.valueOf(i)));
                p.setBoolean(7, i % 2 == 0);
                p.setString(8, "héllo " + i);
                p.setString(9, "v" + i);
                p.setDate(10, Date.valueOf("2024-02-" + (20 + i)));
                p.setTimestamp(11, ts);
                p.setTimestamp(12, tz);
                p.setObject(13, u);
                p.setBytes(14, by);
                equal(p.executeUpdate(), 1, "insert count");
                try (ResultSet k = p.getGeneratedKeys()) {
                    check(k.next(), "generated key row");
                    equal(k.getInt("id"), i, "generated id");
                }
            }
        }
        try (PreparedStatement p = c.prepareStatement(
                "SELECT id, i2, i4, i8, f4, f8, n, b, t, v, d, ts, tz, u, by FROM jd_t WHERE id = ?")) {
            for (int i = 1; i <= 7; i++) {
                p.setInt(1, i);
                try (ResultSet r = p.executeQuery()) {
                    check(r.next(), "row " + i);
                    equal(r.getInt("id"), i, "id");
                    equal(r.getShort("i2"), (short) -i, "i2");
                    equal(r.getInt("i4"), 40 + i, "i4");
                    equal(r.getLong("i8"), 9007199254740993L * i, "i8");
                    equal(r.getFloat("f4"), 1.5f * i, "f4");
                    equal(r.getDouble("f8"), 2.25 * i, "f8");
                    equal(r.getBigDecimal("n"), new BigDecimal("12.345").multiply(BigDecimal.valueOf(i)), "n");
                    equal(r.getBoolean("b"), i % 2 == 0, "b");
                    equal(r.getString("t"), "héllo " + i, "t");
                    equal(r.getString("v"), "v" + i, "v");
                    equal(r.getDate("d"), Date.valueOf("2024-02-" + (20 + i)), "d");
                    equal(r.getTimestamp("ts"), ts, "ts");
                    equal(r.getTimestamp("tz").toInstant(), tz.toInstant(), "tz");
                    equal(r.getObject("u"), u, "u");
                    check(Arrays.equals(r.getBytes("by"), by), "by");
                    check(!r.next(), "one row");
                    ResultSetMetaData md = r.getMetaData();
                    equal(md.getColumnCount(), 15, "column count");
                    equal(md.getColumnType(4), Types.BIGINT, "i8 type");
                    equal(md.getColumnType(7), Types.NUMERIC, "n type");
                    equal(md.getColumnTypeName(14), "uuid", "u type name");
                }
            }
        }
        // NULLs both ways.
        try (PreparedStatement p = c.prepareStatement("UPDATE jd_t SET t = ?, n = ? WHERE id = ?")) {
            p.setNull(1, Types.VARCHAR);
            p.setNull(2, Types.NUMERIC);
            p.setInt(3, 7);
            equal(p.executeUpdate(), 1, "update count");
        }
        try (Statement st = c.createStatement();
                ResultSet r = st.executeQuery("SELECT t, n FROM jd_t WHERE id = 7")) {
            check(r.next(), "null row");
            equal(r.getString(1), null, "null text");
            equal(r.getBigDecimal(2), null, "null numeric");
        }
        // A batch, in a transaction that commits, then one that rolls back.
        c.setAutoCommit(false);
        try (PreparedStatement p = c.prepareStatement("INSERT INTO jd_t (i4) VALUES (?)")) {
            for (int i = 100; i < 110; i++) {
                p.setInt(1, i);
                p.addBatch();
            }
            int[] counts = p.executeBatch();
            equal(counts.length, 10, "batch length");
            for (int n : counts) {
                equal(n, 1, "batch count");
            }
        }
        c.commit();
        try (Statement st = c.createStatement()) {
            st.executeUpdate("DELETE FROM jd_t");
        }
        c.rollback();
        c.setAutoCommit(true);
        try (Statement st = c.createStatement();
                ResultSet r = st.executeQuery("SELECT count(*), sum(i4) FROM jd_t")) {
            check(r.next(), "count row");
            equal(r.getLong(1), 17L, "rows after rollback");
            equal(r.getLong(2), 7L * 40 + 28 + 1045, "sum");
        }
        // An error's SQLSTATE, and the connection is usable after it.
        try (Statement st = c.createStatement()) {
            st.executeQuery("SELECT * FROM jd_nosuch");
            throw new AssertionError("no error for a missing table");
        } catch (SQLException e) {
            equal(e.getSQLState(), "42P01", "missing table SQLSTATE");
        }
        try (PreparedStatement p = c.prepareStatement("SELECT ?::int + 1")) {
            p.setString(1, "x");
            p.executeQuery();
            throw new AssertionError("no error for a bad integer");
        } catch (SQLException e) {
            equal(e.getSQLState(), "22P02", "bad integer SQLSTATE");
        }
        // DatabaseMetaData reads pg_catalog. (getColumns and getPrimaryKeys are left out:
        // their queries use window functions and information_schema._pg_expandarray.)
        DatabaseMetaData md = c.getMetaData();
        check(md.getDatabaseProductName().equals("PostgreSQL"), "product name");
        equal(md.getDatabaseMajorVersion(), 15, "major version");
        try (ResultSet r = md.getTables(null, "public", "jd_t", new String[] {"TABLE"})) {
            check(r.next(), "getTables row");
            equal(r.getString("TABLE_NAME"), "jd_t", "table name");
            equal(r.getString("TABLE_TYPE"), "TABLE", "table type");
            check(!r.next(), "one table");
        }
        // A fetch size, outside autocommit: pgjdbc reads the result through one portal,
        // 50 rows per Execute, each continuing where the last stopped.
        c.setAutoCommit(false);
        try (PreparedStatement p = c.prepareStatement(
                "SELECT g, 'row ' || g FROM generate_series(1, 1000) g WHERE g > ?")) {
            p.setFetchSize(50);
            p.setInt(1, 10);
            long sum = 0;
            int rows = 0;
            try (ResultSet r = p.executeQuery()) {
                while (r.next()) {
                    sum += r.getInt(1);
                    equal(r.getString(2), "row " + r.getInt(1), "fetched row");
                    rows++;
                }
            }
            equal(rows, 990, "rows fetched 50 at a time");
            equal(sum, 500500L - 55L, "their sum");
        }
        c.commit();
        c.setAutoCommit(true);
        try (Statement st = c.createStatement()) {
            st.execute("DROP TABLE jd_t");
        }
    }
}
