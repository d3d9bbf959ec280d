package spark_jobs.decode;

import java.io.Serializable;
import java.util.Arrays;

import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Reads the payload of a Debezium change event as JsonConverter writes it with schemas,
 * {@code {"schema":{...},"payload":{"before":...,"after":...,"updateDescription":...,"source":{...},"op":...,
 * "ts_ms":...}}}, or without its schema member (cut off by the caller), into the row that {@code from_json}
 * gives for the same text with spark_jobs.decode's payload schema, in one pass over its bytes. Only the plain
 * cases are taken: anything else (a top-level member but those two, a member of a type the schema does not
 * expect, a number that is not a plain long, a duplicate member, a string that is not valid UTF-8, a lone
 * surrogate, a raw control character, text after the value, nesting deeper than 64) gives {@code null}, and the
 * caller parses the text with {@code from_json} as before. Members the schema does not name are passed over, as
 * {@code from_json} passes them over. Each string of the row is a copy: the text's bytes may be a buffer Spark
 * reuses for the next row.
 *
 * <p>The schema member is the same for every record of a topic and two thirds of each value: a
 * {@link SchemaPrefix} keeps the {@code {"schema":<S>,} the last value began with, and a value beginning with
 * exactly those bytes (one comparison) is read from the member after them.
 */
final class PayloadScanner {
    private static final byte[] SCHEMA = JsonBytes.bytes("schema");
    private static final byte[] PAYLOAD = JsonBytes.bytes("payload");
    private static final byte[] BEFORE = JsonBytes.bytes("before");
    private static final byte[] AFTER = JsonBytes.bytes("after");
    private static final byte[] UPDATE = JsonBytes.bytes("updateDescription");
    private static final byte[] SOURCE = JsonBytes.bytes("source");
    private static final byte[] OP = JsonBytes.bytes("op");
    private static final byte[] TS_MS = JsonBytes.bytes("ts_ms");
    private static final byte[] REMOVED = JsonBytes.bytes("removedFields");
    private static final byte[] UPDATED = JsonBytes.bytes("updatedFields");
    private static final byte[] TRUNCATED = JsonBytes.bytes("truncatedArrays");
    private static final byte[] SNAPSHOT = JsonBytes.bytes("snapshot");
    private static final byte[] DB = JsonBytes.bytes("db");
    private static final byte[] COLLECTION = JsonBytes.bytes("collection");
    private static final byte[] ORD = JsonBytes.bytes("ord");
    private static final byte[] LSID = JsonBytes.bytes("lsid");
    private static final byte[] TXN_NUMBER = JsonBytes.bytes("txnNumber");
    private static final byte[] ID = JsonBytes.bytes("id");

    /** Reads the value of one member. */
    @FunctionalInterface
    private interface Member {
        Object read(JsonBytes in) throws JsonBytes.Bail;
    }

    private static final Member STRING = JsonBytes::string;
    private static final Member LONG = JsonBytes::longValue;
    private static final Member STRINGS = JsonBytes::stringArray;
    private static final Member SKIP = in -> {
        in.skipValue(0);
        return null;
    };
    // an array here is read as its JSON text by the parse schema: left to from_json
    private static final Member NULL_ONLY = in -> {
        if (!in.literalNull()) {
            throw JsonBytes.BAIL;
        }
        return null;
    };

    // each object's members in the order of the parse schema's fields
    private static final byte[][] SOURCE_NAMES = {TS_MS, SNAPSHOT, DB, COLLECTION, ORD, LSID, TXN_NUMBER};
    private static final Member[] SOURCE_MEMBERS = {LONG, STRING, STRING, STRING, LONG, STRING, LONG};
    private static final byte[][] UPDATE_NAMES = {REMOVED, UPDATED, TRUNCATED};
    private static final Member[] UPDATE_MEMBERS = {STRINGS, STRING, NULL_ONLY};
    private static final byte[][] PAYLOAD_NAMES = {BEFORE, AFTER, UPDATE, SOURCE, OP, TS_MS};
    private static final Member[] PAYLOAD_MEMBERS = {STRING, STRING, in -> row(in, UPDATE_NAMES, UPDATE_MEMBERS),
        in -> row(in, SOURCE_NAMES, SOURCE_MEMBERS), STRING, LONG};
    // {"schema":..., "payload":{...}} (the schema member, which the parse schema does not read, passed over), or
    // {"payload":{...}} (the schema member cut off by the caller); any other member: left to from_json
    private static final byte[][] ENVELOPE_NAMES = {SCHEMA, PAYLOAD};
    private static final Member[] ENVELOPE_MEMBERS = {SKIP, in -> row(in, PAYLOAD_NAMES, PAYLOAD_MEMBERS)};
    private static final byte[][] ID_NAMES = {ID};
    private static final Member[] ID_MEMBERS = {STRING};
    private static final byte[][] KEY_NAMES = {PAYLOAD, ID};
    private static final Member[] KEY_MEMBERS = {in -> member(in, ID_NAMES, ID_MEMBERS, 0), STRING};

    private PayloadScanner() {
    }

    private static final byte[] SCHEMA_START = JsonBytes.bytes("{\"schema\":");
    private static final int SCHEMA_SEEN = 1;  // the bit of SCHEMA in ENVELOPE_NAMES

    /** The {@code {"schema":<S>,} (compact, {@code <S>} the whole schema) of the last value scanned with it. */
    static final class SchemaPrefix implements Serializable {
        private static final long serialVersionUID = 1L;

        private transient volatile byte[] bytes;
    }

    /**
     * The payload row of {@code text}, or null when it is not one of the plain cases. A text beginning with
     * {@code known}'s bytes is read from the member after them; otherwise whole, and its own schema prefix is
     * kept in {@code known} for the next one.
     */
    static GenericInternalRow scan(UTF8String text, SchemaPrefix known) {
        byte[] bytes = text.getBytes();
        JsonBytes in = new JsonBytes(bytes);
        try {
            byte[] prefix = known.bytes;
            Object[] envelope;
            if (prefix != null && bytes.length > prefix.length
                    && Arrays.equals(bytes, 0, prefix.length, prefix, 0, prefix.length)) {
                in.skipTo(prefix.length);
                envelope = new Object[ENVELOPE_NAMES.length];
                members(in, ENVELOPE_NAMES, ENVELOPE_MEMBERS, true, envelope, SCHEMA_SEEN, true);
            } else {
                envelope = object(in, ENVELOPE_NAMES, ENVELOPE_MEMBERS, true);
                known.bytes = schemaPrefix(bytes);
            }
            if (envelope == null || envelope[1] == null || !in.atEnd()) {
                return null;
            }
            return (GenericInternalRow) envelope[1];
        } catch (JsonBytes.Bail | RuntimeException e) {
            return null;
        }
    }

    // {"schema":<S>, when bytes begin so (compact: no whitespace before the comma), else null
    private static byte[] schemaPrefix(byte[] bytes) {
        int start = SCHEMA_START.length;
        if (bytes.length <= start || !Arrays.equals(bytes, 0, start, SCHEMA_START, 0, start)) {
            return null;
        }
        JsonBytes in = new JsonBytes(bytes);
        in.skipTo(start);
        try {
            in.skipValue(0);
        } catch (JsonBytes.Bail e) {
            return null;
        }
        int end = in.position();
        return end < bytes.length && bytes[end] == ',' ? Arrays.copyOf(bytes, end + 1) : null;
    }

    /**
     * The id of a record key as JsonConverter writes Debezium's keys, {@code {"schema":{...},"payload":{"id":
     * "<id>"}}} or {@code {"id":"<id>"}}: {@code payload.id}, else {@code id}, as {@code from_json} with
     * spark_jobs.decode's key schema reads them; null when the key is not one of the plain cases (as for
     * {@link #scan}: a member of another type, a duplicate, ...) or has neither.
     */
    static UTF8String scanKey(UTF8String text) {
        JsonBytes in = new JsonBytes(text.getBytes());
        try {
            Object[] key = object(in, KEY_NAMES, KEY_MEMBERS, false);
            if (key == null || !in.atEnd()) {
                return null;
            }
            return (UTF8String) (key[0] != null ? key[0] : key[1]);
        } catch (JsonBytes.Bail | RuntimeException e) {
            return null;
        }
    }

    private static GenericInternalRow row(JsonBytes in, byte[][] names, Member[] members) throws JsonBytes.Bail {
        Object[] values = object(in, names, members, false);
        return values == null ? null : new GenericInternalRow(values);
    }

    private static Object member(JsonBytes in, byte[][] names, Member[] members, int field) throws JsonBytes.Bail {
        Object[] values = object(in, names, members, false);
        return values == null ? null : values[field];
    }

    // JSON null (null), or an object: its members named in names read by members, in names' order (a duplicate
    // bails), any other member passed over (strict: bails)
    private static Object[] object(JsonBytes in, byte[][] names, Member[] members, boolean strict)
            throws JsonBytes.Bail {
        if (in.literalNull()) {
            return null;
        }
        in.expect('{');
        Object[] values = new Object[names.length];
        members(in, names, members, strict, values, 0, true);
        return values;
    }

    // the members of an object up to its '}' into values (seen: the bits of the names already read; first: no
    // comma before the next member)
    private static void members(JsonBytes in, byte[][] names, Member[] members, boolean strict, Object[] values,
                                int seen, boolean first) throws JsonBytes.Bail {
        while (in.nextMember(first)) {
            first = false;
            int field = in.keyIndex(names);
            if (field < 0) {
                if (strict) {
                    throw JsonBytes.BAIL;
                }
                in.skipValue(0);
                continue;
            }
            if ((seen & (1 << field)) != 0) {
                throw JsonBytes.BAIL;
            }
            seen |= 1 << field;
            values[field] = members[field].read(in);
        }
    }
}
