package spark_jobs.decode;

import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.unsafe.types.UTF8String;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;

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
    private static final class Bail extends Exception {
        private static final long serialVersionUID = 1L;

        Bail() {
            super(null, null, false, false);
        }
    }

    private static final Bail BAIL = new Bail();
    private static final int MAX_DEPTH = 64;

    private static final byte[] SCHEMA = bytes("schema");
    private static final byte[] PAYLOAD = bytes("payload");
    private static final byte[] BEFORE = bytes("before");
    private static final byte[] AFTER = bytes("after");
    private static final byte[] UPDATE = bytes("updateDescription");
    private static final byte[] SOURCE = bytes("source");
    private static final byte[] OP = bytes("op");
    private static final byte[] TS_MS = bytes("ts_ms");
    private static final byte[] REMOVED = bytes("removedFields");
    private static final byte[] UPDATED = bytes("updatedFields");
    private static final byte[] TRUNCATED = bytes("truncatedArrays");
    private static final byte[] SNAPSHOT = bytes("snapshot");
    private static final byte[] DB = bytes("db");
    private static final byte[] COLLECTION = bytes("collection");
    private static final byte[] ORD = bytes("ord");
    private static final byte[] LSID = bytes("lsid");
    private static final byte[] TXN_NUMBER = bytes("txnNumber");

    private final byte[] b;
    private final int end;
    private int pos;
    private int keyStart;
    private int keyEnd;
    private byte[] buffer = new byte[0];

    private PayloadScanner(byte[] bytes, int start, int end) {
        this.b = bytes;
        this.pos = start;
        this.end = end;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** The payload row of {@code text}, or null when it is not one of the plain cases. */
    static GenericInternalRow scan(UTF8String text) {
        byte[] bytes = text.getBytes();
        PayloadScanner scanner = new PayloadScanner(bytes, 0, bytes.length);
        try {
            return scanner.envelope();
        } catch (Bail | RuntimeException e) {
            return null;
        }
    }

    // {"schema":..., "payload":{...}} (the schema member, which the parse schema does not read, passed over), or
    // {"payload":{...}} (the schema member cut off by the caller)
    private GenericInternalRow envelope() throws Bail {
        expect('{');
        GenericInternalRow payload = null;
        boolean schema = false;
        boolean first = true;
        while (nextMember(first)) {
            first = false;
            if (keyIs(PAYLOAD) && payload == null) {
                payload = payload();
                if (payload == null) {
                    throw BAIL;
                }
            } else if (keyIs(SCHEMA) && !schema) {
                schema = true;
                skipValue(0);
            } else {
                throw BAIL;
            }
        }
        whitespace();
        if (payload == null || pos != end) {
            throw BAIL;
        }
        return payload;
    }

    // "<name>" then ':' (the name without escapes), its bytes at [keyStart, keyEnd)
    private void key() throws Bail {
        expect('"');
        keyStart = pos;
        while (true) {
            if (pos >= end) {
                throw BAIL;
            }
            byte c = b[pos];
            if (c == '"') {
                break;
            }
            if (c == '\\' || (c & 0xff) < 0x20 || c < 0) {
                throw BAIL;
            }
            pos++;
        }
        keyEnd = pos++;
        expect(':');
    }

    private boolean keyIs(byte[] name) {
        int length = keyEnd - keyStart;
        if (length != name.length) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            if (b[keyStart + i] != name[i]) {
                return false;
            }
        }
        return true;
    }

    // after '{' or ',' of an object: true when another member follows (its name read), false at '}'
    private boolean nextMember(boolean first) throws Bail {
        whitespace();
        if (pos >= end) {
            throw BAIL;
        }
        if (b[pos] == '}') {
            pos++;
            return false;
        }
        if (!first) {
            expect(',');
        }
        key();
        return true;
    }

    private GenericInternalRow payload() throws Bail {
        if (literalNull()) {
            return null;
        }
        expect('{');
        Object[] values = new Object[6];
        int seen = 0;
        boolean first = true;
        while (nextMember(first)) {
            first = false;
            int field;
            if (keyIs(AFTER)) {
                field = 1;
                values[1] = string();
            } else if (keyIs(SOURCE)) {
                field = 3;
                values[3] = source();
            } else if (keyIs(OP)) {
                field = 4;
                values[4] = string();
            } else if (keyIs(TS_MS)) {
                field = 5;
                values[5] = longValue();
            } else if (keyIs(BEFORE)) {
                field = 0;
                values[0] = string();
            } else if (keyIs(UPDATE)) {
                field = 2;
                values[2] = updateDescription();
            } else {
                skipValue(0);
                continue;
            }
            if ((seen & (1 << field)) != 0) {
                throw BAIL;
            }
            seen |= 1 << field;
        }
        return new GenericInternalRow(values);
    }

    private GenericInternalRow updateDescription() throws Bail {
        if (literalNull()) {
            return null;
        }
        expect('{');
        Object[] values = new Object[3];
        int seen = 0;
        boolean first = true;
        while (nextMember(first)) {
            first = false;
            int field;
            if (keyIs(REMOVED)) {
                field = 0;
                values[0] = stringArray();
            } else if (keyIs(UPDATED)) {
                field = 1;
                values[1] = string();
            } else if (keyIs(TRUNCATED)) {
                field = 2;
                if (!literalNull()) {  // an array, which the schema reads as its JSON text: left to from_json
                    throw BAIL;
                }
            } else {
                skipValue(0);
                continue;
            }
            if ((seen & (1 << field)) != 0) {
                throw BAIL;
            }
            seen |= 1 << field;
        }
        return new GenericInternalRow(values);
    }

    private GenericInternalRow source() throws Bail {
        if (literalNull()) {
            return null;
        }
        expect('{');
        Object[] values = new Object[7];
        int seen = 0;
        boolean first = true;
        while (nextMember(first)) {
            first = false;
            int field;
            if (keyIs(TS_MS)) {
                field = 0;
                values[0] = longValue();
            } else if (keyIs(SNAPSHOT)) {
                field = 1;
                values[1] = string();
            } else if (keyIs(DB)) {
                field = 2;
                values[2] = string();
            } else if (keyIs(COLLECTION)) {
                field = 3;
                values[3] = string();
            } else if (keyIs(ORD)) {
                field = 4;
                values[4] = longValue();
            } else if (keyIs(LSID)) {
                field = 5;
                values[5] = string();
            } else if (keyIs(TXN_NUMBER)) {
                field = 6;
                values[6] = longValue();
            } else {
                skipValue(0);
                continue;
            }
            if ((seen & (1 << field)) != 0) {
                throw BAIL;
            }
            seen |= 1 << field;
        }
        return new GenericInternalRow(values);
    }

    private GenericArrayData stringArray() throws Bail {
        if (literalNull()) {
            return null;
        }
        expect('[');
        ArrayList<Object> items = new ArrayList<>();
        whitespace();
        if (pos < end && b[pos] == ']') {
            pos++;
            return new GenericArrayData(items.toArray());
        }
        while (true) {
            whitespace();
            if (pos < end && b[pos] == 'n') {  // from_json keeps a null element
                literal("null");
                items.add(null);
            } else {
                items.add(stringToken());
            }
            whitespace();
            if (pos >= end) {
                throw BAIL;
            }
            if (b[pos] == ']') {
                pos++;
                return new GenericArrayData(items.toArray());
            }
            expect(',');
        }
    }

    private UTF8String string() throws Bail {
        return literalNull() ? null : stringToken();
    }

    private Long longValue() throws Bail {
        if (literalNull()) {
            return null;
        }
        boolean negative = pos < end && b[pos] == '-';
        if (negative) {
            pos++;
        }
        int digits = pos;
        long value = 0;
        while (pos < end && b[pos] >= '0' && b[pos] <= '9') {
            value = value * 10 + (b[pos] - '0');
            pos++;
        }
        int count = pos - digits;
        // no digits, a leading zero, more digits than a long surely holds, or a fraction or exponent: from_json's
        if (count == 0 || count > 18 || (count > 1 && b[digits] == '0')) {
            throw BAIL;
        }
        if (pos < end && (b[pos] == '.' || b[pos] == 'e' || b[pos] == 'E')) {
            throw BAIL;
        }
        return negative ? -value : value;
    }

    // a JSON string at pos (after whitespace) as UTF-8: copied as it is when it has no escape
    private UTF8String stringToken() throws Bail {
        expect('"');
        int start = pos;
        while (pos < end) {
            byte c = b[pos];
            if (c == '"') {
                pos++;
                return UTF8String.fromBytes(Arrays.copyOfRange(b, start, pos - 1));
            }
            if (c == '\\' || c < 0x20) {  // an escape, a control character or a non-ASCII byte (negative)
                break;
            }
            pos++;
        }
        return escapedString(start);
    }

    private void skipString() throws Bail {
        expect('"');
        while (pos < end) {
            byte c = b[pos];
            if (c == '"') {
                pos++;
                return;
            }
            if (c == '\\' || c < 0x20) {
                escapedString(pos);
                return;
            }
            pos++;
        }
        throw BAIL;
    }

    private UTF8String escapedString(int start) throws Bail {
        int length = 0;
        ensure(pos - start + 16);
        System.arraycopy(b, start, buffer, 0, pos - start);
        length = pos - start;
        while (true) {
            if (pos >= end) {
                throw BAIL;
            }
            byte c = b[pos];
            if (c == '"') {
                pos++;
                return UTF8String.fromBytes(Arrays.copyOf(buffer, length));
            }
            ensure(length + 4);
            if (c == '\\') {
                if (pos + 1 >= end) {
                    throw BAIL;
                }
                byte e = b[pos + 1];
                pos += 2;
                switch (e) {
                    case '"': buffer[length++] = '"'; break;
                    case '\\': buffer[length++] = '\\'; break;
                    case '/': buffer[length++] = '/'; break;
                    case 'b': buffer[length++] = '\b'; break;
                    case 'f': buffer[length++] = '\f'; break;
                    case 'n': buffer[length++] = '\n'; break;
                    case 'r': buffer[length++] = '\r'; break;
                    case 't': buffer[length++] = '\t'; break;
                    case 'u': length = codePoint(length); break;
                    default: throw BAIL;
                }
            } else if (c >= 0x20) {
                buffer[length++] = c;
                pos++;
            } else if (c < 0 && (c & 0xff) >= 0x80) {
                length = utf8Sequence(length);
            } else {
                throw BAIL;  // a raw control character
            }
        }
    }

    // \\uXXXX (pos after the 'u'), a surrogate pair as one code point; written as UTF-8
    private int codePoint(int length) throws Bail {
        int unit = hex4();
        int point = unit;
        if (unit >= 0xD800 && unit <= 0xDBFF) {
            if (pos + 1 >= end || b[pos] != '\\' || b[pos + 1] != 'u') {
                throw BAIL;
            }
            pos += 2;
            int low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) {
                throw BAIL;
            }
            point = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
        } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
            throw BAIL;
        }
        if (point < 0x80) {
            buffer[length++] = (byte) point;
        } else if (point < 0x800) {
            buffer[length++] = (byte) (0xC0 | (point >> 6));
            buffer[length++] = (byte) (0x80 | (point & 0x3F));
        } else if (point < 0x10000) {
            buffer[length++] = (byte) (0xE0 | (point >> 12));
            buffer[length++] = (byte) (0x80 | ((point >> 6) & 0x3F));
            buffer[length++] = (byte) (0x80 | (point & 0x3F));
        } else {
            buffer[length++] = (byte) (0xF0 | (point >> 18));
            buffer[length++] = (byte) (0x80 | ((point >> 12) & 0x3F));
            buffer[length++] = (byte) (0x80 | ((point >> 6) & 0x3F));
            buffer[length++] = (byte) (0x80 | (point & 0x3F));
        }
        return length;
    }

    private int hex4() throws Bail {
        if (pos + 4 > end) {
            throw BAIL;
        }
        int value = 0;
        for (int i = 0; i < 4; i++) {
            int c = b[pos++];
            int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (digit < 0) {
                throw BAIL;
            }
            value = value * 16 + digit;
        }
        return value;
    }

    // one well-formed UTF-8 sequence of 2-4 bytes at pos (no overlong form, no surrogate, at most U+10FFFF),
    // copied; anything else is left to from_json (which reads malformed bytes as U+FFFD)
    private int utf8Sequence(int length) throws Bail {
        int lead = b[pos] & 0xff;
        int count;
        int min;
        int point;
        if (lead >= 0xC2 && lead <= 0xDF) {
            count = 1;
            min = 0x80;
            point = lead & 0x1F;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            count = 2;
            min = 0x800;
            point = lead & 0x0F;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            count = 3;
            min = 0x10000;
            point = lead & 0x07;
        } else {
            throw BAIL;
        }
        if (pos + count >= end) {
            throw BAIL;
        }
        for (int i = 1; i <= count; i++) {
            int next = b[pos + i] & 0xff;
            if ((next & 0xC0) != 0x80) {
                throw BAIL;
            }
            point = (point << 6) | (next & 0x3F);
        }
        if (point < min || point > 0x10FFFF || (point >= 0xD800 && point <= 0xDFFF)) {
            throw BAIL;
        }
        ensure(length + count + 1);
        System.arraycopy(b, pos, buffer, length, count + 1);
        pos += count + 1;
        return length + count + 1;
    }

    private void ensure(int size) {
        if (buffer.length < size) {
            byte[] larger = new byte[Math.max(size, Math.max(64, buffer.length * 2))];
            System.arraycopy(buffer, 0, larger, 0, buffer.length);
            buffer = larger;
        }
    }

    // any JSON value, checked and passed over
    private void skipValue(int depth) throws Bail {
        if (depth > MAX_DEPTH) {
            throw BAIL;
        }
        whitespace();
        if (pos >= end) {
            throw BAIL;
        }
        byte c = b[pos];
        switch (c) {
            case '"':
                skipString();
                return;
            case '{': {
                pos++;
                boolean first = true;
                while (true) {
                    whitespace();
                    if (pos < end && b[pos] == '}') {
                        pos++;
                        return;
                    }
                    if (!first) {
                        expect(',');
                        whitespace();
                    }
                    first = false;
                    skipString();
                    expect(':');
                    skipValue(depth + 1);
                }
            }
            case '[': {
                pos++;
                boolean first = true;
                while (true) {
                    whitespace();
                    if (pos < end && b[pos] == ']') {
                        pos++;
                        return;
                    }
                    if (!first) {
                        expect(',');
                    }
                    first = false;
                    skipValue(depth + 1);
                }
            }
            case 't':
                literal("true");
                return;
            case 'f':
                literal("false");
                return;
            case 'n':
                literal("null");
                return;
            default:
                number();
        }
    }

    private void number() throws Bail {
        if (pos < end && b[pos] == '-') {
            pos++;
        }
        int digits = pos;
        while (pos < end && b[pos] >= '0' && b[pos] <= '9') {
            pos++;
        }
        if (pos == digits || (pos - digits > 1 && b[digits] == '0')) {
            throw BAIL;
        }
        if (pos < end && b[pos] == '.') {
            pos++;
            int fraction = pos;
            while (pos < end && b[pos] >= '0' && b[pos] <= '9') {
                pos++;
            }
            if (pos == fraction) {
                throw BAIL;
            }
        }
        if (pos < end && (b[pos] == 'e' || b[pos] == 'E')) {
            pos++;
            if (pos < end && (b[pos] == '+' || b[pos] == '-')) {
                pos++;
            }
            int exponent = pos;
            while (pos < end && b[pos] >= '0' && b[pos] <= '9') {
                pos++;
            }
            if (pos == exponent) {
                throw BAIL;
            }
        }
    }

    private boolean literalNull() throws Bail {
        whitespace();
        if (pos < end && b[pos] == 'n') {
            literal("null");
            return true;
        }
        return false;
    }

    private void literal(String word) throws Bail {
        int length = word.length();
        if (pos + length > end) {
            throw BAIL;
        }
        for (int i = 0; i < length; i++) {
            if (b[pos + i] != word.charAt(i)) {
                throw BAIL;
            }
        }
        pos += length;
        // a literal runs into the next token only through a delimiter
        if (pos < end) {
            byte next = b[pos];
            if (next != ',' && next != '}' && next != ']' && next != ' ' && next != '\t' && next != '\n'
                    && next != '\r') {
                throw BAIL;
            }
        }
    }

    private void expect(char c) throws Bail {
        whitespace();
        if (pos >= end || b[pos] != c) {
            throw BAIL;
        }
        pos++;
    }

    private void whitespace() {
        while (pos < end) {
            byte c = b[pos];
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }
}
