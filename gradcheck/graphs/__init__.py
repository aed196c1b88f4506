"""Expression graphs: the op registry (every op's checking facts), the graph IR and its JSON
format, node shapes, random generation, hypothesis strategies, shrinking, the regression corpus."""
