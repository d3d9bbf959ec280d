package spark_jobs.decode;

import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.unsafe.types.UTF8String;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;

/**
 * A cursor over the bytes of one JSON text for {@link PayloadScanner}: reads the tokens the scanner expects and
 * passes over the values it does not name, checking them; throws {@link Bail} at anything outside the plain cases
 * (see {@link PayloadScanner}), which the scanner turns into "no row".
 */
final class JsonBytes {
    static final class Bail extends Exception {
        private static final long serialVersionUID = 1L;

        Bail() {
            super(null, null, false, false);
        }
    }

    static final Bail BAIL = new Bail();
    private static final int MAX_DEPTH = 64;

    private final byte[] b;
    private final int end;
    private int pos;
    private int keyStart;
    private int keyEnd;
    private byte[] buffer = new byte[0];

    JsonBytes(byte[] bytes) {
        this.b = bytes;
        this.pos = 0;
        this.end = bytes.length;
    }

    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** Goes on reading at byte {@code position}. */
    void skipTo(int position) {
        pos = position;
    }

    int position() {
        return pos;
    }

    /** Whether only whitespace is left. */
    boolean atEnd() {
        whitespace();
        return pos == end;
    }

    // "<name>" then ':' (the name without escapes), its bytes at [keyStart, keyEnd)
    void key() throws Bail {
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

    /** The index in {@code names} of the name just read by {@link #key}; -1 when it is none of them. */
    int keyIndex(byte[][] names) {
        for (int i = 0; i < names.length; i++) {
            if (keyIs(names[i])) {
                return i;
            }
        }
        return -1;
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
    boolean nextMember(boolean first) throws Bail {
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

    GenericArrayData stringArray() throws Bail {
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

    UTF8String string() throws Bail {
        return literalNull() ? null : stringToken();
    }

    Long longValue() throws Bail {
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
    UTF8String stringToken() throws Bail {
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

    void skipString() throws Bail {
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

    UTF8String escapedString(int start) throws Bail {
        ensure(pos - start + 16);
        System.arraycopy(b, start, buffer, 0, pos - start);
        int length = pos - start;
        while (true) {
            // the bytes up to the next quote, escape, control character or non-ASCII byte, copied at once
            int run = pos;
            while (run < end) {
                byte c = b[run];
                if (c == '"' || c == '\\' || c < 0x20) {
                    break;
                }
                run++;
            }
            if (run > pos) {
                ensure(length + run - pos);
                System.arraycopy(b, pos, buffer, length, run - pos);
                length += run - pos;
                pos = run;
            }
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
            } else if (c < 0) {
                length = utf8Sequence(length);
            } else {
                throw BAIL;  // a raw control character
            }
        }
    }

    // \\uXXXX (pos after the 'u'), a surrogate pair as one code point; written as UTF-8
    int codePoint(int length) throws Bail {
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

    int hex4() throws Bail {
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
    int utf8Sequence(int length) throws Bail {
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

    void ensure(int size) {
        if (buffer.length < size) {
            byte[] larger = new byte[Math.max(size, Math.max(64, buffer.length * 2))];
            System.arraycopy(buffer, 0, larger, 0, buffer.length);
            buffer = larger;
        }
    }

    // any JSON value, checked and passed over
    void skipValue(int depth) throws Bail {
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

    void number() throws Bail {
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

    boolean literalNull() throws Bail {
        whitespace();
        if (pos < end && b[pos] == 'n') {
            literal("null");
            return true;
        }
        return false;
    }

    void literal(String word) throws Bail {
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

    void expect(char c) throws Bail {
        whitespace();
        if (pos >= end || b[pos] != c) {
            throw BAIL;
        }
        pos++;
    }

    void whitespace() {
        while (pos < end) {
            byte c = b[pos];
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }
}
