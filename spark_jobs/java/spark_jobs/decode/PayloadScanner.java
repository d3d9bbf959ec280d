package spark_jobs.decode;

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

    private PayloadScanner() {
    }

    /** The payload row of {@code text}, or null when it is not one of the plain cases. */
    static GenericInternalRow scan(UTF8String text) {
        JsonBytes in = new JsonBytes(text.getBytes());
        try {
            return envelope(in);
        } catch (JsonBytes.Bail | RuntimeException e) {
            return null;
        }
    }

    // {"schema":..., "payload":{...}} (the schema member, which the parse schema does not read, passed over), or
    // {"payload":{...}} (the schema member cut off by the caller)
    private static GenericInternalRow envelope(JsonBytes in) throws JsonBytes.Bail {
        in.expect('{');
        GenericInternalRow payload = null;
        boolean schema = false;
        boolean first = true;
        while (in.nextMember(first)) {
            first = false;
            if (in.keyIs(PAYLOAD) && payload == null) {
                payload = payload(in);
                if (payload == null) {
                    throw JsonBytes.BAIL;
                }
            } else if (in.keyIs(SCHEMA) && !schema) {
                schema = true;
                in.skipValue(0);
            } else {
                throw JsonBytes.BAIL;
            }
        }
        if (payload == null || !in.atEnd()) {
            throw JsonBytes.BAIL;
        }
        return payload;
    }

    private static GenericInternalRow payload(JsonBytes in) throws JsonBytes.Bail {
        if (in.literalNull()) {
            return null;
        }
        in.expect('{');
        Object[] values = new Object[6];
        int seen = 0;
        boolean first = true;
        while (in.nextMember(first)) {
            first = false;
            int field;
            if (in.keyIs(AFTER)) {
                field = 1;
                values[1] = in.string();
            } else if (in.keyIs(SOURCE)) {
                field = 3;
                values[3] = source(in);
            } else if (in.keyIs(OP)) {
                field = 4;
                values[4] = in.string();
            } else if (in.keyIs(TS_MS)) {
                field = 5;
                values[5] = in.longValue();
            } else if (in.keyIs(BEFORE)) {
                field = 0;
                values[0] = in.string();
            } else if (in.keyIs(UPDATE)) {
                field = 2;
                values[2] = updateDescription(in);
            } else {
                in.skipValue(0);
                continue;
            }
            if ((seen & (1 << field)) != 0) {
                throw JsonBytes.BAIL;
            }
            seen |= 1 << field;
        }
        return new GenericInternalRow(values);
    }

    private static GenericInternalRow updateDescription(JsonBytes in) throws JsonBytes.Bail {
        if (in.literalNull()) {
            return null;
        }
        in.expect('{');
        Object[] values = new Object[3];
        int seen = 0;
        boolean first = true;
        while (in.nextMember(first)) {
            first = false;
            int field;
            if (in.keyIs(REMOVED)) {
                field = 0;
                values[0] = in.stringArray();
            } else if (in.keyIs(UPDATED)) {
                field = 1;
                values[1] = in.string();
            } else if (in.keyIs(TRUNCATED)) {
                field = 2;
                if (!in.literalNull()) {  // an array, which the schema reads as its JSON text: left to from_json
                    throw JsonBytes.BAIL;
                }
            } else {
                in.skipValue(0);
                continue;
            }
            if ((seen & (1 << field)) != 0) {
                throw JsonBytes.BAIL;
            }
            seen |= 1 << field;
        }
        return new GenericInternalRow(values);
    }

    private static GenericInternalRow source(JsonBytes in) throws JsonBytes.Bail {
        if (in.literalNull()) {
            return null;
        }
        in.expect('{');
        Object[] values = new Object[7];
        int seen = 0;
        boolean first = true;
        while (in.nextMember(first)) {
            first = false;
            int field;
            if (in.keyIs(TS_MS)) {
                field = 0;
                values[0] = in.longValue();
            } else if (in.keyIs(SNAPSHOT)) {
                field = 1;
                values[1] = in.string();
            } else if (in.keyIs(DB)) {
                field = 2;
                values[2] = in.string();
            } else if (in.keyIs(COLLECTION)) {
                field = 3;
                values[3] = in.string();
            } else if (in.keyIs(ORD)) {
                field = 4;
                values[4] = in.longValue();
            } else if (in.keyIs(LSID)) {
                field = 5;
                values[5] = in.string();
            } else if (in.keyIs(TXN_NUMBER)) {
                field = 6;
                values[6] = in.longValue();
            } else {
                in.skipValue(0);
                continue;
            }
            if ((seen & (1 << field)) != 0) {
                throw JsonBytes.BAIL;
            }
            seen |= 1 << field;
        }
        return new GenericInternalRow(values);
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
            return key(in);
        } catch (JsonBytes.Bail | RuntimeException e) {
            return null;
        }
    }

    private static UTF8String key(JsonBytes in) throws JsonBytes.Bail {
        in.expect('{');
        UTF8String payloadId = null;
        UTF8String id = null;
        int seen = 0;
        boolean first = true;
        while (in.nextMember(first)) {
            first = false;
            int field;
            if (in.keyIs(PAYLOAD)) {
                field = 0;
                payloadId = keyPayload(in);
            } else if (in.keyIs(ID)) {
                field = 1;
                id = in.string();
            } else {
                in.skipValue(0);
                continue;
            }
            if ((seen & (1 << field)) != 0) {
                throw JsonBytes.BAIL;
            }
            seen |= 1 << field;
        }
        UTF8String found = payloadId != null ? payloadId : id;
        if (found == null || !in.atEnd()) {
            throw JsonBytes.BAIL;
        }
        return found;
    }

    private static UTF8String keyPayload(JsonBytes in) throws JsonBytes.Bail {
        if (in.literalNull()) {
            return null;
        }
        in.expect('{');
        UTF8String id = null;
        boolean seen = false;
        boolean first = true;
        while (in.nextMember(first)) {
            first = false;
            if (!in.keyIs(ID)) {
                in.skipValue(0);
                continue;
            }
            if (seen) {
                throw JsonBytes.BAIL;
            }
            seen = true;
            id = in.string();
        }
        return id;
    }
}
