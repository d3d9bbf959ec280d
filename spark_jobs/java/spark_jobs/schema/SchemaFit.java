package spark_jobs.schema;

import java.io.IOException;
import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.json.JsonReadFeature;

import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import spark_jobs.functions.TextFunction;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.runtime.AbstractFunction1;

/**
 * The SQL function {@code spark_jobs_fits_schema(text, schema)}: whether the JSON document {@code text} surely
 * leaves the parse schema {@code schema} (a JSON schema string, a literal) as it is when Spark's JSON inference of
 * it (with {@code dropFieldIfAllNull}) is merged into {@code schema} the way {@code spark_jobs.schema.merge} does:
 * every member's value is null, or of the type its field has (a whole number in a {@code long} or {@code double}
 * field, any number in a {@code double} one, a boolean in a {@code boolean} one, an object in a struct and an array
 * in an array field, member by member and element by element), or anything in a {@code string} field (merging a
 * conflicting type gives a string). Anything else gives false: a member the schema does not have unless its value
 * is null, an empty string outside a string field (Spark infers it as null), a decimal field, text that does not
 * parse, text after the document. False only means "not known to fit": the caller infers the schema as before.
 * A null text gives null.
 */
public final class SchemaFit extends TextFunction {
    private static final long serialVersionUID = 1L;
    public static final String NAME = "spark_jobs_fits_schema";
    private static final JsonFactory JSON = JsonFactory.builder()
        .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();

    private final String schemaJson;
    private transient Shape shape;  // built from schemaJson in each JVM that evaluates it

    public SchemaFit(Expression child, String schemaJson) {
        super(child, schemaJson);
        this.schemaJson = schemaJson;
    }

    /** Registers the function in {@code spark}'s session. */
    public static void register(SparkSession spark) {
        spark.sessionState().functionRegistry().createOrReplaceTempFunction(NAME, new Builder(), "internal");
    }

    private static final class Builder extends AbstractFunction1<Seq<Expression>, Expression>
            implements Serializable {
        private static final long serialVersionUID = 1L;

        @Override
        public Expression apply(Seq<Expression> arguments) {
            if (arguments.size() != 2 || !arguments.apply(1).foldable()
                    || !(arguments.apply(1).dataType() instanceof StringType)) {
                throw new IllegalArgumentException(NAME + " takes a text and a schema's JSON as a string literal");
            }
            Object schema = arguments.apply(1).eval(null);
            if (schema == null) {
                throw new IllegalArgumentException(NAME + ": the schema is null");
            }
            String json = schema.toString();
            if (!(DataType.fromJson(json) instanceof StructType)) {
                throw new IllegalArgumentException(NAME + ": the schema is not a struct type");
            }
            return new SchemaFit(arguments.head(), json);
        }
    }

    /** The parse schema as the check walks it: a struct's fields by name. */
    private static final class Shape {
        static final int OTHER = 0;
        static final int STRING = 1;
        static final int LONG = 2;
        static final int DOUBLE = 3;
        static final int BOOLEAN = 4;
        static final int STRUCT = 5;
        static final int ARRAY = 6;

        final int kind;
        final Map<String, Shape> fields;
        final Shape element;

        private Shape(int kind, Map<String, Shape> fields, Shape element) {
            this.kind = kind;
            this.fields = fields;
            this.element = element;
        }

        static Shape of(DataType type) {
            if (type instanceof StructType struct) {
                Map<String, Shape> fields = new HashMap<>();
                for (StructField field : struct.fields()) {
                    fields.put(field.name(), of(field.dataType()));
                }
                return new Shape(STRUCT, fields, null);
            }
            if (type instanceof ArrayType array) {
                return new Shape(ARRAY, null, of(array.elementType()));
            }
            int kind = type instanceof StringType ? STRING : type instanceof LongType ? LONG
                : type instanceof DoubleType ? DOUBLE : type instanceof BooleanType ? BOOLEAN : OTHER;
            return new Shape(kind, null, null);
        }
    }

    static boolean fits(byte[] text, Shape schema) {
        try (JsonParser parser = JSON.createParser(text)) {
            return parser.nextToken() == JsonToken.START_OBJECT && object(parser, schema)
                && parser.nextToken() == null;
        } catch (IOException | RuntimeException exc) {  // not JSON: not known to fit
            return false;
        }
    }

    private static boolean object(JsonParser parser, Shape struct) throws IOException {
        JsonToken token;
        while ((token = parser.nextToken()) == JsonToken.FIELD_NAME) {
            Shape field = struct.fields.get(parser.currentName());
            JsonToken value = parser.nextToken();
            if (field == null ? value != JsonToken.VALUE_NULL : !value(parser, value, field)) {
                return false;
            }
        }
        return token == JsonToken.END_OBJECT;
    }

    private static boolean value(JsonParser parser, JsonToken token, Shape type) throws IOException {
        if (token == JsonToken.VALUE_NULL) {
            return true;
        }
        if (type.kind == Shape.STRING) {
            parser.skipChildren();
            return true;
        }
        switch (token) {
            case START_OBJECT:
                return type.kind == Shape.STRUCT && object(parser, type);
            case START_ARRAY:
                if (type.kind != Shape.ARRAY) {
                    return false;
                }
                JsonToken element;
                while ((element = parser.nextToken()) != JsonToken.END_ARRAY) {
                    if (element == null || !value(parser, element, type.element)) {
                        return false;
                    }
                }
                return true;
            case VALUE_NUMBER_INT:
                if (type.kind == Shape.DOUBLE) {
                    return true;
                }
                JsonParser.NumberType number = parser.getNumberType();
                return type.kind == Shape.LONG
                    && (number == JsonParser.NumberType.INT || number == JsonParser.NumberType.LONG);
            case VALUE_NUMBER_FLOAT:
                return type.kind == Shape.DOUBLE;
            case VALUE_TRUE:
            case VALUE_FALSE:
                return type.kind == Shape.BOOLEAN;
            default:
                return false;
        }
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        return new SchemaFit(newChildren.apply(0), schemaJson);
    }

    @Override
    public DataType dataType() {
        return DataTypes.BooleanType;
    }

    @Override
    protected Object apply(UTF8String text) {
        if (shape == null) {
            shape = Shape.of(DataType.fromJson(schemaJson));
        }
        return fits(text.getBytes(), shape);
    }

    @Override
    public String prettyName() {
        return NAME;
    }
}
