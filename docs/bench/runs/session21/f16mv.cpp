#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <cstdint>
#include <sys/mman.h>
using Clock = std::chrono::steady_clock;
static float hsum256(__m256 v){ __m128 a=_mm_add_ps(_mm256_castps256_ps128(v),_mm256_extractf128_ps(v,1)); a=_mm_add_ps(a,_mm_movehl_ps(a,a)); a=_mm_add_ss(a,_mm_movehdup_ps(a)); return _mm_cvtss_f32(a);}
// current: avx2 4 rows, linear prefetch at +8192
template<int MODE, int D>

void mv4(const uint8_t* base, size_t rb, const float* x, size_t n, size_t rows, float* y){
  for(size_t r=0;r+4<=rows;r+=4){
    const uint8_t* w=base+r*rb;
    if constexpr(MODE==0||MODE==1||MODE==8){
      __m256 a[4][2]; for(auto&q:a) q[0]=q[1]=_mm256_setzero_ps();
      const char* ahead=(const char*)w+D;
      for(size_t c=0;c+16<=n;c+=16,ahead+=128){
        if(MODE==0){_mm_prefetch(ahead,_MM_HINT_T0);_mm_prefetch(ahead+64,_MM_HINT_T0);}
        if(MODE==8){const char* p=ahead-D+std::max<size_t>(4*rb,D);_mm_prefetch(p,_MM_HINT_T0);_mm_prefetch(p+64,_MM_HINT_T0);}
        __m256 x0=_mm256_loadu_ps(x+c),x1=_mm256_loadu_ps(x+c+8);
        for(int k=0;k<4;k++){a[k][0]=_mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(w+k*rb+2*c))),x0,a[k][0]);
          a[k][1]=_mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(w+k*rb+2*c+16))),x1,a[k][1]);}
      }
      for(int k=0;k<4;k++) y[r+k]=hsum256(_mm256_add_ps(a[k][0],a[k][1]));
    } else {
      __m512 a[4]; for(auto&q:a) q=_mm512_setzero_ps();
      const char* ahead=(const char*)w+D;
      for(size_t c=0;c+16<=n;c+=16,ahead+=128){
        if(MODE==2){_mm_prefetch(ahead,_MM_HINT_T0);_mm_prefetch(ahead+64,_MM_HINT_T0);}
        if(MODE==3 && (c&31)==0){ for(int k=0;k<4;k++) _mm_prefetch((const char*)w+k*rb+2*c+D,_MM_HINT_T0);}
        if(MODE==5){_mm_prefetch(ahead+4*rb-D,_MM_HINT_T0);_mm_prefetch(ahead+4*rb-D+64,_MM_HINT_T0);}
        if(MODE==6){const char* p=ahead-D+std::max<size_t>(4*rb,D);_mm_prefetch(p,_MM_HINT_T0);_mm_prefetch(p+64,_MM_HINT_T0);}
        if(MODE==7){const char* p=ahead-D+std::max<size_t>(4*rb,D);_mm_prefetch(p,_MM_HINT_T1);_mm_prefetch(p+64,_MM_HINT_T1);}
        __m512 xv=_mm512_loadu_ps(x+c);
        for(int k=0;k<4;k++) a[k]=_mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(w+k*rb+2*c))),xv,a[k]);
      }
      for(int k=0;k<4;k++){ __m512 v=a[k]; y[r+k]=hsum256(_mm256_add_ps(_mm512_castps512_ps256(v),_mm512_extractf32x8_ps(v,1)));}
    }
  }
}
// 8 rows zmm
template<int D>

void mv8(const uint8_t* base, size_t rb, const float* x, size_t n, size_t rows, float* y){
  for(size_t r=0;r+8<=rows;r+=8){
    const uint8_t* w=base+r*rb;
    __m512 a[8]; for(auto&q:a) q=_mm512_setzero_ps();
    const char* ahead=(const char*)w+D;
    for(size_t c=0;c+16<=n;c+=16,ahead+=256){
      if(D){_mm_prefetch(ahead,_MM_HINT_T0);_mm_prefetch(ahead+64,_MM_HINT_T0);_mm_prefetch(ahead+128,_MM_HINT_T0);_mm_prefetch(ahead+192,_MM_HINT_T0);}
      __m512 xv=_mm512_loadu_ps(x+c);
      for(int k=0;k<8;k++) a[k]=_mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(w+k*rb+2*c))),xv,a[k]);
    }
    for(int k=0;k<8;k++){ __m512 v=a[k]; y[r+k]=hsum256(_mm256_add_ps(_mm512_castps512_ps256(v),_mm512_extractf32x8_ps(v,1)));}
  }
}
 float probe(const uint8_t* p, size_t bytes){
  __m512 a0=_mm512_setzero_ps(),a1=a0,a2=a0,a3=a0;
  for(size_t i=0;i+256<=bytes;i+=256){a0=_mm512_add_ps(a0,_mm512_loadu_ps(p+i));a1=_mm512_add_ps(a1,_mm512_loadu_ps(p+i+64));a2=_mm512_add_ps(a2,_mm512_loadu_ps(p+i+128));a3=_mm512_add_ps(a3,_mm512_loadu_ps(p+i+192));}
  float o[16]; _mm512_storeu_ps(o,_mm512_add_ps(_mm512_add_ps(a0,a1),_mm512_add_ps(a2,a3))); return o[0];
}
int main(int argc,char**argv){
  size_t rows=atoi(argv[1]), n=atoi(argv[2]); size_t rb=2*n, mat=rows*rb;
  size_t copies=std::max<size_t>(2,(512ull<<20)/mat); size_t total=copies*mat;
  uint8_t* buf=(uint8_t*)aligned_alloc(2<<20,(total+(2<<20))&~size_t((2<<20)-1)); madvise(buf,total,MADV_HUGEPAGE);
  for(size_t i=0;i<total/2;i++) ((uint16_t*)buf)[i]=0x3c00+(i%7);
  std::vector<float> x(n,0.5f), y(rows);
  using F=void(*)(const uint8_t*,size_t,const float*,size_t,size_t,float*);
  struct V{const char* name; F f;};
  V vs[]={{"avx2 x4 lin+8K",mv4<0,8192>},{"avx2 x4 nopf",mv4<1,0>},{"zmm x4 nopf",mv4<4,0>},{"zmm x4 lin+8K",mv4<2,8192>},{"zmm x4 lin+16K",mv4<2,16384>},{"zmm x4 lin+4K",mv4<2,4096>},
          {"zmm x4 row+512",mv4<3,512>},{"zmm x4 row+1K",mv4<3,1024>},{"zmm x4 row+2K",mv4<3,2048>},{"zmm x4 nextgrp",mv4<5,0>},{"zmm x4 max(4rb,8K)",mv4<6,8192>},{"zmm x4 max(4rb,16K)",mv4<6,16384>},{"zmm x4 max(4rb,32K)",mv4<6,32768>},{"zmm x4 T1 max16K",mv4<7,16384>},{"avx2 x4 max(4rb,16K)",mv4<8,16384>},{"zmm x8 nopf",mv8<0>},{"zmm x8 lin+8K",mv8<8192>},{"zmm x8 lin+16K",mv8<16384>}};
  int nv=sizeof(vs)/sizeof(vs[0]);
  std::vector<std::vector<double>> gbs(nv+1);
  size_t ci=0;
  for(int rep=0;rep<9;rep++){
    for(int v=0;v<=nv;v++){
      // cold: run on the next copy
      const uint8_t* m=buf+(ci++%copies)*mat;
      auto t0=Clock::now();
      if(v==nv){ volatile float s=probe(m,mat); (void)s;} else vs[v].f(m,rb,x.data(),n,rows,y.data());
      double s=std::chrono::duration<double>(Clock::now()-t0).count();
      gbs[v].push_back(mat/s/1e9);
    }
  }
  for(int v=0;v<=nv;v++){ auto g=gbs[v]; std::sort(g.begin(),g.end()); printf("%-18s median %6.2f GB/s  best %6.2f\n", v==nv?"probe":vs[v].name, g[g.size()/2], g.back()); }
}
