package spark_jobs.decode;

import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;
import spark_jobs.functions.TextFunction;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.runtime.AbstractFunction1;

import java.io.Serializable;

/**
 * The SQL functions {@code spark_jobs_debezium_payload(text)}, the {@code payload} row of a Debezium change event
 * that JsonConverter wrote, and {@code spark_jobs_debezium_key(text)}, the id of its record key, read by
 * {@link PayloadScanner} (null when the text is not one of its plain cases: the caller then parses it with
 * {@code from_json}). The payload's type, a DDL string, is given when the functions are registered
 * ({@link #register}), so the Python side owns the schema.
 */
public final class DebeziumFunction extends TextFunction {
    private static final long serialVersionUID = 1L;
    public static final String PAYLOAD = "spark_jobs_debezium_payload";
    public static final String KEY = "spark_jobs_debezium_key";

    private final DataType type;
    private final boolean key;
    private final PayloadScanner.SchemaPrefix prefix = new PayloadScanner.SchemaPrefix();  // each task's copy its own

    public DebeziumFunction(Expression child, DataType type, boolean key) {
        super(child, type, key);
        this.type = type;
        this.key = key;
    }

    /**
     * Registers both functions in {@code spark}'s session, the payload's row typed {@code payloadDdl}, and
     * {@link spark_jobs.schema.SchemaFit}'s.
     */
    public static void register(SparkSession spark, String payloadDdl) {
        spark_jobs.schema.SchemaFit.register(spark);
        var registry = spark.sessionState().functionRegistry();
        registry.createOrReplaceTempFunction(PAYLOAD, new Builder(PAYLOAD, DataType.fromDDL(payloadDdl), false),
                "internal");
        registry.createOrReplaceTempFunction(KEY, new Builder(KEY, DataTypes.StringType, true), "internal");
    }

    private static final class Builder extends AbstractFunction1<Seq<Expression>, Expression>
            implements Serializable {
        private static final long serialVersionUID = 1L;
        private final String name;
        private final DataType type;
        private final boolean key;

        Builder(String name, DataType type, boolean key) {
            this.name = name;
            this.type = type;
            this.key = key;
        }

        @Override
        public Expression apply(Seq<Expression> arguments) {
            if (arguments.size() != 1) {
                throw new IllegalArgumentException(name + " takes one argument, got " + arguments.size());
            }
            return new DebeziumFunction(arguments.head(), type, key);
        }
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        return new DebeziumFunction(newChildren.apply(0), type, key);
    }

    @Override
    public DataType dataType() {
        return type;
    }

    @Override
    protected Object apply(UTF8String text) {
        return key ? PayloadScanner.scanKey(text) : PayloadScanner.scan(text, prefix);
    }

    @Override
    public String prettyName() {
        return key ? KEY : PAYLOAD;
    }
}
