package spark_jobs.functions;

import java.io.Serializable;
import java.util.Arrays;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.unsafe.types.UTF8String;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A SQL function of spark_jobs over one text argument, evaluated row by row (no generated code): null for a null
 * text, otherwise {@link #apply}. Its {@code parameters}, fixed when the function is built, tell two instances
 * apart besides the argument (Catalyst compares plans by their expressions' product elements).
 */
public abstract class TextFunction extends Expression implements CodegenFallback, Serializable {
    private static final long serialVersionUID = 1L;

    protected final Expression child;
    private final Object[] parameters;
    private final Seq<Expression> children;

    protected TextFunction(Expression child, Object... parameters) {
        this.child = child;
        this.parameters = parameters.clone();
        this.children = CollectionConverters.asScala(List.of(child)).toList();
    }

    /** The function's value for a text that is not null. */
    protected abstract Object apply(UTF8String text);

    @Override
    public final Seq<Expression> children() {
        return children;
    }

    @Override
    public boolean nullable() {
        return true;
    }

    @Override
    public final Object eval(InternalRow input) {
        Object text = child.eval(input);
        return text == null ? null : apply((UTF8String) text);
    }

    @Override
    public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
        return CodegenFallback.super.doGenCode(ctx, ev);
    }

    @Override
    public final int productArity() {
        return 1 + parameters.length;
    }

    @Override
    public final Object productElement(int n) {
        if (n < 0 || n > parameters.length) {
            throw new IndexOutOfBoundsException(Integer.toString(n));
        }
        return n == 0 ? child : parameters[n - 1];
    }

    @Override
    public final boolean canEqual(Object other) {
        return other != null && other.getClass() == getClass();
    }

    @Override
    public final boolean equals(Object other) {
        return canEqual(other) && ((TextFunction) other).child.equals(child)
            && Arrays.equals(((TextFunction) other).parameters, parameters);
    }

    @Override
    public final int hashCode() {
        return 31 * child.hashCode() + Arrays.hashCode(parameters);
    }
}
