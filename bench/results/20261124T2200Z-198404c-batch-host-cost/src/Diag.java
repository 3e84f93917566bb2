public class Diag { public static void main(String[] a) throws Exception { ScanBench.main(a); V.main(a); W.main(a); X.main(a); } }
