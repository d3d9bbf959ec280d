package spark_jobs.decode;

import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.unsafe.types.UTF8String;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

import java.io.Serializable;
import java.util.List;

/**
 * {@code spark_jobs_debezium_payload(text)}: the {@code payload} row of a Debezium change event that
 * JsonConverter wrote, read by {@link PayloadScanner} (null when the text is not one of its plain cases: the
 * caller then parses it with {@code from_json}). Its type, a DDL string, is given by the caller when the function
 * is registered ({@link #register}), so the Python side owns the schema.
 */
public final class DebeziumPayload extends Expression implements CodegenFallback, Serializable {
    private static final long serialVersionUID = 1L;
    public static final String NAME = "spark_jobs_debezium_payload";

    private final Expression child;
    private final DataType type;
    private final Seq<Expression> children;

    public DebeziumPayload(Expression child, DataType type) {
        this.child = child;
        this.type = type;
        this.children = CollectionConverters.asScala(List.of(child)).toList();
    }

    /** Registers the function in {@code spark}'s session, its result typed {@code ddl}. */
    public static void register(SparkSession spark, String ddl) {
        DataType type = DataType.fromDDL(ddl);
        spark.sessionState().functionRegistry().createOrReplaceTempFunction(NAME, new Builder(type), "internal");
    }

    private static final class Builder extends AbstractFunction1<Seq<Expression>, Expression>
            implements Serializable {
        private static final long serialVersionUID = 1L;
        private final DataType type;

        Builder(DataType type) {
            this.type = type;
        }

        @Override
        public Expression apply(Seq<Expression> arguments) {
            if (arguments.size() != 1) {
                throw new IllegalArgumentException(NAME + " takes one argument, got " + arguments.size());
            }
            return new DebeziumPayload(arguments.head(), type);
        }
    }

    @Override
    public Seq<Expression> children() {
        return children;
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        return new DebeziumPayload(newChildren.apply(0), type);
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
        return text == null ? null : PayloadScanner.scan((UTF8String) text);
    }

    @Override
    public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
        return CodegenFallback.super.doGenCode(ctx, ev);
    }

    @Override
    public String prettyName() {
        return NAME;
    }

    @Override
    public int productArity() {
        return 2;
    }

    @Override
    public Object productElement(int n) {
        if (n == 0) {
            return child;
        }
        if (n == 1) {
            return type;
        }
        throw new IndexOutOfBoundsException(Integer.toString(n));
    }

    @Override
    public boolean canEqual(Object other) {
        return other instanceof DebeziumPayload;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof DebeziumPayload && ((DebeziumPayload) other).child.equals(child)
                && ((DebeziumPayload) other).type.equals(type);
    }

    @Override
    public int hashCode() {
        return 31 * child.hashCode() + type.hashCode();
    }
}
