package spark_jobs.decode;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

import java.io.Serializable;
import java.util.List;

/**
 * The SQL functions {@code spark_jobs_debezium_payload(text)}, the {@code payload} row of a Debezium change event
 * that JsonConverter wrote, and {@code spark_jobs_debezium_key(text)}, the id of its record key, read by
 * {@link PayloadScanner} (null when the text is not one of its plain cases: the caller then parses it with
 * {@code from_json}). The payload's type, a DDL string, is given when the functions are registered
 * ({@link #register}), so the Python side owns the schema.
 */
public final class DebeziumFunction extends Expression implements CodegenFallback, Serializable {
    private static final long serialVersionUID = 1L;
    public static final String PAYLOAD = "spark_jobs_debezium_payload";
    public static final String KEY = "spark_jobs_debezium_key";

    private final Expression child;
    private final DataType type;
    private final boolean key;
    private final Seq<Expression> children;
    private final PayloadScanner.SchemaPrefix prefix = new PayloadScanner.SchemaPrefix();  // each task's copy its own

    public DebeziumFunction(Expression child, DataType type, boolean key) {
        this.child = child;
        this.type = type;
        this.key = key;
        this.children = CollectionConverters.asScala(List.of(child)).toList();
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
    public Seq<Expression> children() {
        return children;
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
    public boolean nullable() {
        return true;
    }

    @Override
    public Object eval(InternalRow input) {
        Object text = child.eval(input);
        if (text == null) {
            return null;
        }
        return key ? PayloadScanner.scanKey((UTF8String) text) : PayloadScanner.scan((UTF8String) text, prefix);
    }

    @Override
    public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
        return CodegenFallback.super.doGenCode(ctx, ev);
    }

    @Override
    public String prettyName() {
        return key ? KEY : PAYLOAD;
    }

    @Override
    public int productArity() {
        return 3;
    }

    @Override
    public Object productElement(int n) {
        switch (n) {
            case 0:
                return child;
            case 1:
                return type;
            case 2:
                return key;
            default:
                throw new IndexOutOfBoundsException(Integer.toString(n));
        }
    }

    @Override
    public boolean canEqual(Object other) {
        return other instanceof DebeziumFunction;
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof DebeziumFunction)) {
            return false;
        }
        DebeziumFunction that = (DebeziumFunction) other;
        return that.key == key && that.child.equals(child) && that.type.equals(type);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * child.hashCode() + type.hashCode()) + (key ? 1 : 0);
    }
}
